//! The steps a converter class's own `set_vocab` is made of.
//!
//! Most architectures take one of the shared vocabulary paths ([`super::VocabKind`]); a class
//! whose `set_vocab` does something of its own is written in its architecture's file as a
//! [`super::SetVocab`] function over a [`VocabBuild`]: it chooses among these steps, in the
//! order its reference class runs them, and the keys they write accumulate here.

use serde_json::Value as Json;

use super::kv::Kv;
use super::{proto, PreTokenizerMatch, VocabPath, VocabRequest};
use crate::ConvertError;

/// The path taken and, for the BPE and WordPiece paths, the pre-tokenizer detection.
pub type VocabOutcome = (VocabPath, Option<PreTokenizerMatch>);

/// How a padded vocabulary (`MambaModel.set_vocab`) chooses its multiple.
#[derive(Debug, Clone, Copy)]
pub enum PadMultiple {
    /// The config's `pad_vocab_size_multiple`, else this.
    Default(u64),
    /// This, whatever the config says (the class overrides the hparam).
    Always(u64),
}

/// One vocabulary being built: the request, tokenizer_config.json and the keys so far.
pub struct VocabBuild<'a> {
    pub(super) req: &'a VocabRequest<'a>,
    pub(super) tc: Option<&'a Json>,
    pub(super) kv: Kv,
}

impl<'a> VocabBuild<'a> {
    /// The model directory.
    pub fn dir(&self) -> &'a crate::hf::ModelDir {
        self.req.dir
    }

    /// The SentencePiece model (`tokenizer.model`), if there is one.
    pub fn spm_model(&self) -> Result<Option<&'a proto::SpmModel>, ConvertError> {
        self.req.dir.tokenizer_model()
    }

    /// The SentencePiece model, refused with `why` when there is none.
    pub fn require_spm_model(&self, why: &str) -> Result<&'a proto::SpmModel, ConvertError> {
        self.spm_model()?.ok_or_else(|| {
            ConvertError::io(
                self.req.dir.tokenizer_model_path(),
                std::io::Error::new(std::io::ErrorKind::NotFound, why.to_string()),
            )
        })
    }

    /// The merged hparams.
    pub fn hparams(&self) -> &Json {
        self.req.hparams
    }

    /// tokenizer_config.json, when the directory has one.
    pub fn tokenizer_config(&self) -> Option<&Json> {
        self.tc
    }

    /// Sets a boolean key (`tokenizer.ggml.add_*`); a key already written keeps its place.
    pub fn set_bool(&mut self, key: &str, v: bool) {
        self.kv.bool(key, v);
    }

    /// Sets a string key (`add_string`: an empty string is not written); a key already
    /// written keeps its place and takes the new value.
    pub fn set_string(&mut self, key: &str, s: &str) {
        self.kv.string(key, s);
    }

    /// Sets a UINT32 key (a special token id); a key already written keeps its place and
    /// takes the new value.
    pub fn set_u32(&mut self, key: &str, v: u32) {
        self.kv.u32(key, v);
    }

    /// `tokenizer.ggml.add_space_prefix` from tokenizer_config.json's `add_prefix_space`,
    /// when it has the key (Python truthiness).
    pub fn space_prefix_from_config(&mut self) {
        if let Some(v) = self.tc.and_then(|t| t.get("add_prefix_space")) {
            self.kv
                .bool(super::key::ADD_SPACE_PREFIX, super::json::truthy(Some(v)));
        }
    }

    /// `_set_vocab_sentencepiece` with this model.
    pub fn sentencepiece(&mut self, model: &proto::SpmModel) -> Result<VocabPath, ConvertError> {
        super::sentencepiece(self.req, model, &mut self.kv)
    }

    /// `_set_vocab_none`: no vocabulary, only `tokenizer.ggml.model = "none"`.
    pub fn no_vocabulary(&mut self) -> VocabOutcome {
        self.kv.string(super::key::MODEL, "none");
        (VocabPath::NoVocabulary, None)
    }

    /// `_set_vocab_gpt2`.
    pub fn gpt2(&mut self) -> Result<VocabOutcome, ConvertError> {
        super::gpt2(self.req, self.tc, &mut self.kv)
    }

    /// `Phi3MiniModel.set_vocab`: GPT-2 BPE when tokenizer_config.json names
    /// `GPT2Tokenizer`, else Phi-3's SentencePiece variant (the shared [`super::VocabKind::Phi3`]
    /// path, as a step of a class's own `set_vocab`).
    pub fn phi3(&mut self) -> Result<VocabOutcome, ConvertError> {
        super::set_vocab_phi3(self.req, self.tc, &mut self.kv)
    }

    /// `_set_vocab_gpt2` whose special vocabulary reads only the token types `types`
    /// (`SpecialVocab(dir, load_merges=True, special_token_types=types)`).
    pub fn gpt2_special_types(&mut self, types: &[&str]) -> Result<VocabOutcome, ConvertError> {
        super::gpt2_special_types(self.req, self.tc, &mut self.kv, Some(types))
    }

    /// `_set_vocab_gpt2` over a class's own `get_vocab_base` that keeps the added tokens'
    /// text as the vocabulary holds it and types them by `added_tokens_decoder` alone
    /// (CONTROL when special or absent there, else USER_DEFINED).
    pub fn gpt2_added_as_decoded(&mut self) -> Result<VocabOutcome, ConvertError> {
        super::gpt2_with_rule(
            self.req,
            self.tc,
            &mut self.kv,
            None,
            super::bpe::AddedTokenTypes::AsDecoded,
        )
    }

    /// Sets a special token id key (`add_eos_token_id`, ...): a key already written keeps
    /// its place; an id outside UINT32 is an error naming the key.
    pub fn set_token_id(&mut self, key: &str, id: i128) -> Result<(), ConvertError> {
        let v = u32::try_from(id).map_err(|_| {
            ConvertError::Other(format!("{key}: token id {id} does not fit in a UINT32"))
        })?;
        self.kv.u32(key, v);
        Ok(())
    }

    /// Gives every token whose text is `text` the type `ty` (`gguf.TokenType`) in the token
    /// list written so far (a class's `get_vocab_base` that re-types a token).
    pub fn set_token_type(&mut self, text: &str, ty: i32) {
        use ggufkit::gguf::{ArrayValue, Value};
        let Some(Value::Array(ArrayValue::String(tokens))) = self.kv.get(super::key::TOKENS) else {
            return;
        };
        let hits: Vec<usize> = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| t.0 == text.as_bytes())
            .map(|(i, _)| i)
            .collect();
        if hits.is_empty() {
            return;
        }
        let Some(Value::Array(ArrayValue::I32(types))) = self.kv.get(super::key::TOKEN_TYPE) else {
            return;
        };
        let mut types = types.clone();
        for i in hits {
            if let Some(t) = types.get_mut(i) {
                *t = ty;
            }
        }
        self.kv
            .array(super::key::TOKEN_TYPE, ArrayValue::I32(types));
    }

    /// Whether the directory's special vocabulary has a chat template
    /// (`gguf.SpecialVocab(dir, load_merges=False).chat_template is not None`).
    pub fn has_chat_template(&self) -> Result<bool, ConvertError> {
        let sv = super::SpecialVocab::load(self.req.dir, false, None, None)?;
        Ok(sv.chat_template.is_some())
    }

    /// Sets the chat template (`add_chat_template` of one template): a key already written
    /// keeps its place.
    pub fn set_chat_template(&mut self, template: &str) {
        self.kv.string(super::key::CHAT_TEMPLATE, template);
    }

    /// `add_chat_template` with a value read from a file: one template (a string) or a list
    /// of `{name, template}` objects; any other value is refused (gguf-py iterates it as a
    /// list of such objects).
    pub fn add_chat_template(&mut self, value: &Json) -> Result<(), ConvertError> {
        match value {
            Json::String(s) => {
                self.set_chat_template(s);
                Ok(())
            }
            Json::Array(list) => super::special::write_named_templates(&mut self.kv, list),
            v => Err(ConvertError::Other(format!(
                "a chat template that is neither a string nor a list of named templates: {v}"
            ))),
        }
    }

    /// `_set_vocab_llama_hf`.
    pub fn llama_hf(&mut self) -> Result<VocabPath, ConvertError> {
        super::llama_hf(self.req, self.tc, &mut self.kv)
    }

    /// `LlamaHfVocab`'s tokens as a vocabulary of tokenizer model `model` (the tokens whose
    /// text is in `user_defined` typed USER_DEFINED) with the special vocabulary and its
    /// merges; no fallback to another path (Gemma 4's `set_vocab`).
    pub fn llama_hf_as(
        &mut self,
        model: &str,
        user_defined: &[&str],
    ) -> Result<VocabPath, ConvertError> {
        super::llama_hf_as(self.req, self.tc, &mut self.kv, model, user_defined)
    }

    /// The GPT-2 path with special tokens chosen by their text in the tokenizer's added
    /// vocabulary (tokenizer.json's `added_tokens` and tokenizer_config.json's
    /// `added_tokens_decoder`) where the special-token files leave them unset: `ids` looks
    /// each text up with the function it is given (an error names a text that is not there)
    /// and returns the `(type, id)` pairs in the order they are set.
    pub fn gpt2_with_added_specials(
        &mut self,
        ids: super::AddedSpecials,
    ) -> Result<VocabOutcome, ConvertError> {
        super::gpt2_with_added_specials(self.req, self.tc, &mut self.kv, ids)
    }

    /// SentencePiece (required, `why` says so), `add_space_prefix` from tokenizer_config.json,
    /// then the special tokens of its `added_tokens_decoder`, `eos` moved to the added token
    /// `eos_text`.
    pub fn sentencepiece_with_config_specials(
        &mut self,
        why: &str,
        eos_text: &str,
    ) -> Result<VocabPath, ConvertError> {
        super::sentencepiece_with_config_specials(self.req, self.tc, &mut self.kv, why, eos_text)
    }

    /// `MambaModel.set_vocab` / `Mamba2Model.set_vocab`: `vocab_size` rounded up to a
    /// multiple, then SentencePiece or GPT-2 BPE (SentencePiece first when `spm_first`).
    pub fn padded(
        &mut self,
        multiple: PadMultiple,
        spm_first: bool,
    ) -> Result<VocabOutcome, ConvertError> {
        match multiple {
            PadMultiple::Default(m) => {
                super::set_vocab_mamba(self.req, self.tc, m, spm_first, &mut self.kv)
            }
            PadMultiple::Always(m) => {
                let hp = super::with_hparam(self.req.hparams, "pad_vocab_size_multiple", m.into());
                let req = VocabRequest {
                    hparams: &hp,
                    ..self.req.clone()
                };
                super::set_vocab_mamba(&req, self.tc, m, spm_first, &mut self.kv)
            }
        }
    }

    /// XLM-RoBERTa's unigram SentencePiece model (`sentencepiece.bpe.model`) as a `t5`
    /// vocabulary in fairseq's id layout.
    pub fn xlmr_unigram(&mut self) -> Result<VocabOutcome, ConvertError> {
        Ok((
            super::xlmr::set_vocab(self.req.dir, self.req.hparams, &mut self.kv)?,
            None,
        ))
    }

    /// T5's unigram SentencePiece model as a `t5` vocabulary in its own id layout.
    pub fn t5_unigram(&mut self) -> Result<VocabOutcome, ConvertError> {
        Ok((
            super::xlmr::set_vocab_t5(self.req.dir, self.req.hparams, &mut self.kv)?,
            None,
        ))
    }

    /// `_set_vocab_rwkv_world`: the RWKV World vocabulary file, its special tokens and
    /// default chat template.
    pub fn rwkv_world(&mut self) -> Result<VocabOutcome, ConvertError> {
        Ok((
            super::world::set_vocab(self.req.dir, self.req.hparams, &mut self.kv)?,
            None,
        ))
    }

    /// `BertModel.set_vocab`: WordPiece.
    pub fn wordpiece(&mut self) -> Result<VocabOutcome, ConvertError> {
        super::wordpiece(self.req, self.tc, &mut self.kv)
    }

    /// A `llama` (SentencePiece-style) vocabulary from a table the class built itself:
    /// `tokenizer.ggml.model` "llama", pre-tokenizer "default", then the tokens, their
    /// scores (when the class writes them) and their types, each list as long as the tokens.
    pub fn llama_table(
        &mut self,
        tokens: Vec<String>,
        scores: Option<Vec<f32>>,
        types: Vec<i32>,
    ) -> Result<(), ConvertError> {
        self.token_table("llama", tokens, scores, types)
    }

    /// A token table the class built itself under the tokenizer model `model`
    /// (`tokenizer.ggml.model`), pre-tokenizer "default", then the tokens, their scores (when
    /// the class writes them) and their types, each list as long as the tokens.
    pub fn token_table(
        &mut self,
        model: &str,
        tokens: Vec<String>,
        scores: Option<Vec<f32>>,
        types: Vec<i32>,
    ) -> Result<(), ConvertError> {
        let n_scores = scores.as_ref().map_or(tokens.len(), Vec::len);
        if n_scores != tokens.len() || types.len() != tokens.len() {
            return Err(ConvertError::Other(format!(
                "a vocabulary of {} tokens with {n_scores} scores and {} types",
                tokens.len(),
                types.len()
            )));
        }
        super::spm::check_size(tokens.len())?;
        self.kv.string(super::key::MODEL, model);
        self.kv.string(super::key::PRE, "default");
        self.kv.array(super::key::TOKENS, super::strings(tokens));
        if let Some(scores) = scores {
            self.kv
                .array(super::key::SCORES, ggufkit::gguf::ArrayValue::F32(scores));
        }
        self.kv.array(
            super::key::TOKEN_TYPE,
            ggufkit::gguf::ArrayValue::I32(types),
        );
        Ok(())
    }

    /// A second special vocabulary of just the token types `types` (no merges, no size),
    /// read from the files, then each (type, id) of `set` put in where the files gave none,
    /// written without its chat template: a class's fixed fill-in-the-middle ids.
    pub fn fixed_special_tokens(
        &mut self,
        types: &[&str],
        set: &[(&str, i128)],
    ) -> Result<(), ConvertError> {
        let mut sv = super::SpecialVocab::load(self.req.dir, false, Some(types), None)?;
        for (typ, id) in set {
            sv.set_special_token(typ, *id)?;
        }
        sv.chat_template = None;
        sv.add_to(&mut self.kv)
    }

    /// The special vocabulary of an `n`-token table (`gguf.SpecialVocab(dir, n_vocab=n)`,
    /// no merges), with the ids of `set` (type, id) put in its table before it is written:
    /// an id already read keeps its place, a new one goes last. A type named in `required`
    /// must have been read from the files (the reference indexes it).
    pub fn special_vocab_with(
        &mut self,
        n: usize,
        required: &[&str],
        set: &[(&str, u32)],
    ) -> Result<(), ConvertError> {
        let mut sv = super::SpecialVocab::load(self.req.dir, false, None, Some(n))?;
        for typ in required {
            if !sv.special_token_ids.iter().any(|(k, _)| k == typ) {
                return Err(ConvertError::Other(format!(
                    "the special vocabulary has no {typ} token id"
                )));
            }
        }
        for (typ, id) in set {
            match sv.special_token_ids.iter_mut().find(|(k, _)| k == typ) {
                Some(e) => e.1 = *id,
                None => sv.special_token_ids.push(((*typ).to_string(), *id)),
            }
        }
        sv.add_to(&mut self.kv)
    }

    /// `added_tokens.json`'s entries (text, id) in file order; empty without the file.
    pub fn added_tokens_json(&self) -> Result<Vec<(String, Json)>, ConvertError> {
        Ok(super::spm::added_tokens_json(self.req.dir)?
            .map(|(o, _)| o.0)
            .unwrap_or_default())
    }

    /// tokenizer_config.json's `added_tokens_decoder` entries (id, entry) in file order;
    /// empty without the file or the key.
    pub fn added_tokens_decoder(&self) -> Result<Vec<(String, Json)>, ConvertError> {
        Ok(super::spm::added_tokens_decoder(self.req.dir)?
            .map(|(o, _)| o.0)
            .unwrap_or_default())
    }
}
