//! `ChatGLMModel` / `ChatGLMForConditionalGeneration` (THUDM's remote code: ChatGLM2/3,
//! GLM-4-9B) and `GlmForCausalLM` (transformers' GLM-4), arch `chatglm` (`ChatGLMModel` in
//! `conversion/chatglm.py`).
//!
//! The remote-code checkpoints name their tensors under `transformer.` (dropped before
//! mapping): a fused `self_attention.query_key_value` (query heads, then one key and one
//! value block per group) kept as `attn_qkv`, `mlp.dense_h_to_4h` (gate then up) kept as
//! `ffn_up`, `output_layer`; `rotary_pos_emb.inv_freq` is dropped. transformers' layout is
//! Llama's with a fused `gate_up_proj`, also kept as `ffn_up`.
//!
//! The hparams are the class's own spellings, whichever layout: the context length is
//! `seq_length` (else the hidden size), the norm epsilon `layernorm_epsilon` (else 1e-5),
//! the kv heads `multi_query_group_num` (else `num_key_value_heads`, else the heads), the
//! rotary dimensions `attention_dim` (else `hidden_size / num_attention_heads`, whatever
//! `head_dim` says) times the rope `partial_rotary_factor` (default 0.5), the rope base
//! 10000 times `rope_ratio`; BOS is never added.
//!
//! Two vocabularies: a config whose `_name_or_path` names `THUDM/chatglm3-6b` takes
//! ChatGLM3's SentencePiece table as its remote tokenizer presents it (see
//! [`chatglm3_table`]); every other one is GPT-2 BPE with `eos` and `unk` the added
//! `<|endoftext|>` and `eot` the added `<|user|>` where the special-token files leave them
//! unset. The reference reads `vocab_size` even when `padded_vocab_size` is given, so a
//! config without it is refused.

use ggufkit::gguf::keys::{attention, llm, rope, tokenizer as tok};
use ggufkit::gguf::Value;
use serde_json::Value as Json;

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::proto::{PieceType, SpmModel};
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabPath, VocabQuirks};
use crate::ConvertError;

/// gguf-py's `TokenType` values the ChatGLM3 table uses.
mod tt {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// The ChatGLM class (both layouts).
pub const CHATGLM: Arch = Arch {
    hf_names: &[
        "GlmForCausalLM",
        "ChatGLMModel",
        "ChatGLMForConditionalGeneration",
    ],
    model_types: &[ModelType {
        name: "glm",
        hf_classes: &["GlmForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 151552,
            "hidden_size" => 4096,
            "intermediate_size" => 13696,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 2,
            "head_dim" => 128,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1.5625e-07,
            "rope_theta" => 10000.0,
            "partial_rotary_factor" => 0.5,
            "attention_bias" => true,
            "tie_word_embeddings" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "chatglm",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `ChatGLMModel.filter_tensors`: the rotary table dropped, the `transformer.` prefix
/// removed.
fn filter(name: &str) -> Option<String> {
    if name.ends_with(".rotary_pos_emb.inv_freq") {
        return None;
    }
    Some(
        name.strip_prefix("transformer.")
            .unwrap_or(name)
            .to_string(),
    )
}

/// `ChatGLMModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let n_embed = hp.req_u64(&["hidden_size", "n_embed"])?;
    let n_head = hp.req_u64(&["n_head", "num_attention_heads"])?;
    let n_head_kv = hp
        .find_u64(&["multi_query_group_num", "num_key_value_heads"])?
        .unwrap_or(n_head);
    let ctx = hp.find_u64(&["seq_length"])?.unwrap_or(n_embed);
    p.u32(llm::CONTEXT_LENGTH, ctx)?;
    p.u32(llm::EMBEDDING_LENGTH, n_embed)?;
    let ff = match hp.find_u64(&["ffn_hidden_size", "intermediate_size"])? {
        Some(ff) => ff,
        None => n_embed
            .checked_mul(4)
            .ok_or_else(|| ConvertError::NotACount {
                key: "hidden_size".into(),
                value: n_embed.to_string(),
            })?,
    };
    p.u32(llm::FEED_FORWARD_LENGTH, ff)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.u32(attention::HEAD_COUNT, n_head)?;
    p.u32(attention::HEAD_COUNT_KV, n_head_kv)?;
    let eps = hp.find_f64(&["layernorm_epsilon"])?.unwrap_or(1e-5);
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.file_type();
    let rope_dim = match hp.find_u64(&["attention_dim"])? {
        Some(d) => d,
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            if heads == 0 {
                return Err(ConvertError::NotACount {
                    key: "num_attention_heads".into(),
                    value: "0".into(),
                });
            }
            hp.req_u64(&["hidden_size"])? / heads
        }
    };
    p.u32(
        rope::DIMENSION_COUNT,
        (rope_dim as f64 * partial_rotary_factor(hp)) as u64,
    )?;
    p.md.set(tok::ADD_BOS, Value::Bool(false));
    let base = match hp.find_f64(&["rope_ratio"])? {
        Some(ratio) => 10000.0 * ratio,
        None => 10000.0,
    };
    p.f32(rope::FREQ_BASE, base);
    Ok(())
}

/// The rope parameters' `partial_rotary_factor` (the top-level key mirrored there), else 0.5.
fn partial_rotary_factor(hp: &Hparams) -> f64 {
    hp.rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .unwrap_or(0.5)
}

/// The HF architecture named by the config (for error messages).
fn arch_name(hp: &Json) -> String {
    hp.get("architectures")
        .and_then(|a| a.get(0))
        .and_then(Json::as_str)
        .unwrap_or("ChatGLMModel")
        .to_string()
}

/// `ChatGLMModel.set_vocab`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let hp = b.hparams();
    let name_or_path = hp.get("_name_or_path").and_then(Json::as_str);
    if name_or_path.is_some_and(|n| n.contains("THUDM/chatglm3-6b")) {
        return chatglm3_vocab(b);
    }
    // `hparams.get("padded_vocab_size", hparams["vocab_size"])`: the fallback is evaluated
    // first, so `vocab_size` is required either way.
    if hp.get("vocab_size").is_none() {
        return Err(ConvertError::MissingHparam {
            path: b.dir().config_path(),
            keys: vec!["vocab_size".into()],
            arch: arch_name(hp),
        });
    }
    b.gpt2_with_added_specials(|find| {
        let (eos, eot) = (find("<|endoftext|>")?, find("<|user|>")?);
        Ok(vec![("eos", eos), ("eot", eot), ("unk", eos)])
    })
}

/// The special tokens ChatGLM3's tokenizer appends after the SentencePiece pieces, in id
/// order: written as CONTROL.
const CHATGLM3_SPECIALS: [&str; 9] = [
    "[MASK]",
    "[gMASK]",
    "[sMASK]",
    "sop",
    "eop",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|observation|>",
];

/// The largest table a ChatGLM3 vocabulary may have: the same bound as a SentencePiece
/// vocabulary's (the padded size comes from config.json).
const MAX_TABLE: u64 = 1 << 24;

/// `ChatGLMModel.set_vocab_chatglm3`: the table, `chatglm-spm`, then the special
/// vocabulary of its size.
fn chatglm3_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let m = b.require_spm_model("ChatGLM3's vocabulary is its SentencePiece tokenizer.model")?;
    let hp = b.hparams();
    let size = match hp.get("padded_vocab_size") {
        Some(v) => {
            v.as_u64()
                .filter(|&n| n <= MAX_TABLE)
                .ok_or_else(|| ConvertError::BadHparam {
                    path: b.dir().config_path(),
                    keys: vec!["padded_vocab_size".into()],
                    expected: format!("a count of at most {MAX_TABLE}"),
                    found: v.to_string(),
                })? as usize
        }
        None => distinct_pieces(m),
    };
    let (tokens, scores, types) = chatglm3_table(m, size);
    b.llama_table(tokens, Some(scores), types)?;
    b.set_string(tok::PRE, "chatglm-spm");
    b.special_vocab_with(size, &[], &[])?;
    Ok((VocabPath::SentencePiece, None))
}

/// SentencePiece's id of the trainer's special piece `which` (0 unk, 1 bos, 2 eos), the
/// piece found by its text (a missing one maps to the unknown piece); -1 when that piece
/// does not have the kind SentencePiece expects (unknown for unk, control otherwise).
fn special_piece_id(m: &SpmModel, which: usize) -> i64 {
    const DEFAULTS: [&str; 3] = ["<unk>", "<s>", "</s>"];
    let text = m.special_pieces[which]
        .as_deref()
        .unwrap_or(DEFAULTS[which]);
    let unk = m.pieces.iter().position(|p| p.kind == PieceType::Unknown);
    let want = if which == 0 {
        PieceType::Unknown
    } else {
        PieceType::Control
    };
    match m.pieces.iter().position(|p| p.piece == text).or(unk) {
        Some(i) if m.pieces[i].kind == want => i as i64,
        _ => -1,
    }
}

/// ChatGLM3's `_convert_id_to_token`: the appended special tokens by their ids, an empty
/// string for the bos, eos and unknown (its pad) ids and past the appended tokens, else the
/// SentencePiece piece.
fn chatglm3_piece(m: &SpmModel, blank: &[i64; 3], id: usize) -> String {
    let n = m.pieces.len();
    if let Some(s) = id.checked_sub(n).and_then(|k| CHATGLM3_SPECIALS.get(k)) {
        return (*s).to_string();
    }
    if blank.contains(&(id as i64)) || id > n {
        return String::new();
    }
    m.pieces
        .get(id)
        .map(|p| p.piece.clone())
        .unwrap_or_default()
}

/// The remote tokenizer's `len(get_vocab())`: its ids' pieces, equal ones counted once.
fn distinct_pieces(m: &SpmModel) -> usize {
    let blank = [0, 1, 2].map(|w| special_piece_id(m, w));
    let all = m.pieces.len() + CHATGLM3_SPECIALS.len();
    (0..all)
        .map(|i| chatglm3_piece(m, &blank, i))
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// The tokens, scores and types `set_vocab_chatglm3` builds for `size` ids: ids 0-2 are
/// `<unk>`, `<bos>`, `<eos>`; a SentencePiece id keeps its score (0 for an empty piece)
/// and its kind; past the pieces, an appended special token is CONTROL, an empty piece
/// `[PAD{id}]` UNUSED and any other USER_DEFINED, each with score 0.
pub(crate) fn chatglm3_table(m: &SpmModel, size: usize) -> (Vec<String>, Vec<f32>, Vec<i32>) {
    let blank = [0, 1, 2].map(|w| special_piece_id(m, w));
    let n = m.pieces.len();
    let (mut tokens, mut scores, mut types) = (
        Vec::with_capacity(size),
        Vec::with_capacity(size),
        Vec::with_capacity(size),
    );
    for id in 0..size {
        let piece = match id {
            0 => "<unk>".to_string(),
            1 => "<bos>".to_string(),
            2 => "<eos>".to_string(),
            _ => chatglm3_piece(m, &blank, id),
        };
        if id >= n {
            let (text, ty) = if CHATGLM3_SPECIALS.contains(&piece.as_str()) {
                (piece, tt::CONTROL)
            } else if piece.is_empty() {
                (format!("[PAD{id}]"), tt::UNUSED)
            } else {
                (piece, tt::USER_DEFINED)
            };
            tokens.push(text);
            scores.push(0.0);
            types.push(ty);
            continue;
        }
        let p = &m.pieces[id];
        scores.push(if piece.is_empty() { 0.0 } else { p.score });
        types.push(match p.kind {
            PieceType::Unknown => tt::UNKNOWN,
            PieceType::Control => tt::CONTROL,
            PieceType::Unused => tt::UNUSED,
            PieceType::Byte => tt::BYTE,
            _ => tt::NORMAL,
        });
        tokens.push(piece);
    }
    (tokens, scores, types)
}

#[cfg(test)]
mod tests {
    use super::{chatglm3_table, distinct_pieces, filter, tt};
    use crate::hf::tokenizer::proto::{Piece, PieceType, SpmModel};

    /// The rotary table is dropped and the remote-code prefix removed; other names pass.
    #[test]
    fn chatglm_filter() {
        assert_eq!(filter("transformer.rotary_pos_emb.inv_freq"), None);
        assert_eq!(
            filter("transformer.encoder.layers.0.mlp.dense_h_to_4h.weight").as_deref(),
            Some("encoder.layers.0.mlp.dense_h_to_4h.weight")
        );
        assert_eq!(
            filter("model.layers.1.mlp.gate_up_proj.weight").as_deref(),
            Some("model.layers.1.mlp.gate_up_proj.weight")
        );
    }

    fn piece(piece: &str, score: f32, kind: PieceType) -> Piece {
        Piece {
            piece: piece.into(),
            score,
            kind,
        }
    }

    /// A five-piece model: unk, bos, eos, a normal piece and a byte piece.
    fn model() -> SpmModel {
        SpmModel {
            pieces: vec![
                piece("<unk>", 0.5, PieceType::Unknown),
                piece("<s>", 0.25, PieceType::Control),
                piece("</s>", 0.125, PieceType::Control),
                piece("\u{2581}a", -1.0, PieceType::Normal),
                piece("<0x0A>", 0.0, PieceType::Byte),
            ],
            ..SpmModel::default()
        }
    }

    /// ChatGLM3's table: fixed names for ids 0-2 with their pieces' scores and kinds, the
    /// nine appended special tokens as CONTROL, `[PAD{id}]` past them.
    #[test]
    fn chatglm3_table_follows_the_remote_tokenizer() {
        let (tokens, scores, types) = chatglm3_table(&model(), 16);
        assert_eq!(
            &tokens[..5],
            ["<unk>", "<bos>", "<eos>", "\u{2581}a", "<0x0A>"]
        );
        assert_eq!(&scores[..5], [0.5, 0.25, 0.125, -1.0, 0.0]);
        assert_eq!(
            &types[..5],
            [tt::UNKNOWN, tt::CONTROL, tt::CONTROL, tt::NORMAL, tt::BYTE]
        );
        assert_eq!(tokens[5], "[MASK]");
        assert_eq!(tokens[10], "<|system|>");
        assert_eq!(tokens[13], "<|observation|>");
        assert!(types[5..14].iter().all(|&t| t == tt::CONTROL));
        assert_eq!(&tokens[14..], ["[PAD14]", "[PAD15]"]);
        assert_eq!(&types[14..], [tt::UNUSED, tt::UNUSED]);
        assert!(scores[5..].iter().all(|&s| s == 0.0));
    }

    /// Without `padded_vocab_size` the size is the remote tokenizer's vocabulary: the bos,
    /// eos and unknown ids all read as the empty piece, counted once.
    #[test]
    fn chatglm3_size_counts_distinct_pieces() {
        assert_eq!(distinct_pieces(&model()), 1 + 2 + 9);
    }
}
