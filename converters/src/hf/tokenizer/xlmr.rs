//! XLM-RoBERTa's vocabulary (`_xlmroberta_set_vocab`): a SentencePiece unigram model in
//! `sentencepiece.bpe.model`, written as a `t5` vocabulary with fairseq's id layout.
//!
//! The table has `max(vocab_size, pieces)` entries, `[PAD<i>]` (score -10000, UNUSED) where
//! no piece is. Fairseq puts `<s> <pad> </s> <unk>` first and shifts every piece from id 3
//! by one; the reference does that by prepending the four and dropping the table's first
//! three entries and its last one, so the length stays the same.

use ggufkit::gguf::keys::tokenizer as key;
use ggufkit::gguf::ArrayValue;
use serde_json::Value as Json;

use super::kv::{strings, token_type, Kv};
use super::special::SpecialVocab;
use super::spm::{check_size, load_model_at, piece_type};
use super::{hparam, VocabPath};
use crate::hf::ModelDir;
use crate::ConvertError;

/// The SentencePiece model file XLM-RoBERTa checkpoints carry.
pub(crate) const MODEL_FILE: &str = "sentencepiece.bpe.model";

use key::{PRECOMPILED_CHARSMAP, REMOVE_EXTRA_WS};

/// `head + v[3:-1]`: fairseq's four specials, then the entries from id 3 without the last.
fn fairseq_layout<T: Clone>(v: Vec<T>, head: [T; 4]) -> Vec<T> {
    let keep = v.len().saturating_sub(4);
    let mut out = head.to_vec();
    out.extend(v.into_iter().skip(3).take(keep));
    out
}

/// The XLM-R vocabulary keys. Only the `sentencepiece.bpe.model` path is supported: without
/// it the reference builds the table through transformers' `AutoTokenizer` from
/// tokenizer.json, which is refused here.
pub(crate) fn set_vocab(
    dir: &ModelDir,
    hparams: &Json,
    kv: &mut Kv,
) -> Result<VocabPath, ConvertError> {
    let path = dir.join(MODEL_FILE);
    let Some(model) = load_model_at(&path)? else {
        return Err(ConvertError::Unsupported(format!(
            "XLMRobertaModel: no {MODEL_FILE} in {}: the tokenizer.json-only XLM-RoBERTa \
             vocabulary (built by the reference through transformers' AutoTokenizer) is not \
             supported",
            dir.display()
        )));
    };
    if let Some(t) = model.model_type.filter(|t| *t != 1) {
        return Err(ConvertError::format(
            &path,
            None,
            format!("XLM-RoBERTa needs a unigram SentencePiece model (model_type 1), found {t}"),
        ));
    }
    let n_pieces = model.pieces.len();
    let hp_size = match hparam(hparams, "vocab_size") {
        None => 0,
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ConvertError::NotACount {
                key: "vocab_size".into(),
                value: v.to_string(),
            })?,
    };
    let n = check_size(hp_size.max(n_pieces))?;
    let mut tokens: Vec<String> = (0..n).map(|i| format!("[PAD{i}]")).collect();
    let mut scores = vec![-10000.0f32; n];
    let mut types = vec![token_type::UNUSED; n];
    for (i, p) in model.pieces.iter().enumerate() {
        tokens[i] = p.piece.clone();
        scores[i] = p.score;
        types[i] = piece_type(p.kind);
    }
    // Fairseq's layout: four specials, then the pieces from id 3, the last entry dropped.
    let tokens = fairseq_layout(
        tokens,
        ["<s>", "<pad>", "</s>", "<unk>"].map(str::to_string),
    );
    let scores = fairseq_layout(scores, [0.0; 4]);
    let types = fairseq_layout(
        types,
        [
            token_type::CONTROL,
            token_type::CONTROL,
            token_type::CONTROL,
            token_type::UNKNOWN,
        ],
    );
    let len = tokens.len();
    kv.string(key::MODEL, "t5");
    kv.string(key::PRE, "default");
    kv.array(key::TOKENS, strings(tokens));
    kv.array(key::SCORES, ArrayValue::F32(scores));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(types));
    kv.bool(
        key::ADD_SPACE_PREFIX,
        model.add_dummy_prefix.unwrap_or(true),
    );
    let type_count = match hparam(hparams, "type_vocab_size") {
        None => 1,
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| ConvertError::NotACount {
                key: "type_vocab_size".into(),
                value: v.to_string(),
            })?,
    };
    kv.u32(key::TOKEN_TYPE_COUNT, type_count);
    kv.bool(
        REMOVE_EXTRA_WS,
        model.remove_extra_whitespaces.unwrap_or(true),
    );
    if !model.precompiled_charsmap.is_empty() {
        kv.array(
            PRECOMPILED_CHARSMAP,
            ArrayValue::U8(model.precompiled_charsmap.clone()),
        );
    }
    SpecialVocab::load(dir, false, None, Some(len))?.add_to(kv)?;
    Ok(VocabPath::SentencePiece)
}

/// `T5Model.set_vocab` / `T5EncoderModel.set_vocab`: the unigram SentencePiece model in
/// `tokenizer.model` (else `spiece.model`) as a `t5` vocabulary in the model's own id layout
/// (no fairseq shift), `added_tokens.json` over it (see [`super::spm::create_vocab_t5`]),
/// then the special tokens. A BPE model (Pile-T5) takes the reference's generic
/// SentencePiece path, which is not supported here.
pub(crate) fn set_vocab_t5(
    dir: &ModelDir,
    hparams: &Json,
    kv: &mut Kv,
) -> Result<VocabPath, ConvertError> {
    // T5's own name for the model, read when there is no tokenizer.model.
    let spiece = dir.join("spiece.model");
    let (path, model) = match dir.tokenizer_model()? {
        Some(m) => (
            dir.tokenizer_model_path(),
            Some(std::borrow::Cow::Borrowed(m)),
        ),
        None => {
            let m = load_model_at(&spiece)?.map(std::borrow::Cow::Owned);
            (spiece, m)
        }
    };
    let Some(model) = model else {
        return Err(ConvertError::MissingFile {
            path,
            why: "T5: no tokenizer.model or spiece.model (the reference's FileNotFoundError)"
                .into(),
        });
    };
    match model.model_type.unwrap_or(1) {
        1 => {}
        2 => {
            return Err(ConvertError::Unsupported(format!(
                "{}: a BPE SentencePiece model in a T5 checkpoint (Pile-T5) is converted by \
                 the reference's generic SentencePiece path, which is not supported for T5",
                path.display()
            )))
        }
        t => {
            return Err(ConvertError::format(
                &path,
                None,
                format!("T5 needs a unigram SentencePiece model (model_type 1), found {t}"),
            ))
        }
    }
    // `hparams.get('vocab_size', n_pieces)`: an explicit null is the reference's TypeError.
    if super::hparam(hparams, "vocab_size").is_some_and(Json::is_null) {
        return Err(ConvertError::NotACount {
            key: "vocab_size".into(),
            value: "null".into(),
        });
    }
    let vocab_size = super::hparam_count(hparams, "vocab_size")?;
    let v = super::spm::create_vocab_t5(dir, &model, vocab_size)?;
    let len = v.tokens.len();
    kv.string(key::MODEL, "t5");
    kv.string(key::PRE, "default");
    kv.array(key::TOKENS, strings(v.tokens));
    kv.array(key::SCORES, ArrayValue::F32(v.scores));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(v.types));
    kv.bool(
        key::ADD_SPACE_PREFIX,
        model.add_dummy_prefix.unwrap_or(true),
    );
    kv.bool(
        REMOVE_EXTRA_WS,
        model.remove_extra_whitespaces.unwrap_or(true),
    );
    if !model.precompiled_charsmap.is_empty() {
        kv.array(
            PRECOMPILED_CHARSMAP,
            ArrayValue::U8(model.precompiled_charsmap.clone()),
        );
    }
    SpecialVocab::load(dir, false, None, Some(len))?.add_to(kv)?;
    Ok(VocabPath::SentencePiece)
}
