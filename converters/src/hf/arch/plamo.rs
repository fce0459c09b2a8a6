//! PLaMo 2 and PLaMo 3 (`conversion/plamo.py`; Preferred Networks' remote-code classes, so
//! config.json is read as written).
//!
//! Both keep their blocks under `model.layers.layers.{bid}` with four norms per block
//! (`pre_mixer_norm`, `post_mixer_norm`, `pre_mlp_norm`, `post_mlp_norm`) that the checkpoint
//! stores as offsets: the converter adds 1, 1/5, 1 and 1/5^1.5 to them, and 1 to the final
//! `model.norm`. The post norms are spelled with `.weight` in gguf-py's table, so their GGUF
//! names have no `.weight` suffix. The MLP is one fused `gate_up_proj` (`ffn_up`).
//!
//! - **PLaMo 2** (`plamo2`) is a Mamba hybrid: layer `i` is a Mamba mixer unless
//!   `i % mamba_step == mamba_step // 2` (with fewer layers than `mamba_step // 2`, only the
//!   last layer is attention); `mamba_enabled: false` writes no head counts at all. Its own
//!   hparam block (no generic one): the per-layer head counts (0 on Mamba layers), the SSM
//!   sizes with the class's defaults, the inner size `mamba_num_heads * hidden_size_per_head`.
//!   Tensors: `A = -exp(A_log)`, conv1d squeezed, `dt_bias` / `*_norm_weight` / `q_weight` /
//!   `k_weight` renamed to names the table has.
//! - **PLaMo 3** (`plamo3`): attention only; the generic hparams, the vocabulary size and
//!   the sliding window (`window_size` or `sliding_window`, with `sliding_window_pattern`,
//!   a count or a list of flags); a `rope_scaling_factor` other than 1 becomes YaRN rope
//!   parameters (from `initial_context_length`) unless the config names a rope type. The q/k
//!   norms are shifted by 1 too.
//!
//! The vocabulary (`_set_vocab_plamo`) is `tokenizer.jsonl`, one JSON list a line (`[text,
//! score, type, …]`, blank lines skipped): UNKNOWN / CONTROL / BYTE as typed, any other type
//! NORMAL unless the text is `<|plamo:…|>` (CONTROL), padded with `[PAD<i>]` (score -1000,
//! UNUSED) up to `vocab_size`, written as tokenizer model `plamo2`; tokenizer_config.json
//! (required) names the bos / eos / pad / sep / unk texts, looked up in the table; the
//! end-of-turn id is 4 and no space prefix is added. PLaMo 3 then writes the chat template of
//! `chat_template.jinja`, else of tokenizer_config.json.

use ggufkit::gguf::keys::{attention, llm, rope, ssm, tokenizer as tok};
use serde_json::{Map, Value as Json};

use super::{no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{
    json_truthy, parse_json, read_text, VocabBuild, VocabKind, VocabOutcome, VocabPath, VocabQuirks,
};
use crate::ConvertError;

/// `Plamo2ForCausalLM` / `PLaMo2ForCausalLM` (arch `plamo2`).
pub const PLAMO2: Arch = Arch {
    hf_names: &["Plamo2ForCausalLM", "PLaMo2ForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "plamo2",
    vocab: VocabKind::Own(set_vocab_plamo),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnPostNorm,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnPostNorm,
        Tensor::SsmIn,
        Tensor::SsmConv1d,
        Tensor::SsmX,
        Tensor::SsmDt,
        Tensor::SsmA,
        Tensor::SsmD,
        Tensor::SsmOut,
        Tensor::SsmDtNorm,
        Tensor::SsmBNorm,
        Tensor::SsmCNorm,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(plamo2_tensor),
        ..Rules::NONE
    },
    params: plamo2_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Plamo3ForCausalLM` / `PLaMo3ForCausalLM` (arch `plamo3`).
pub const PLAMO3: Arch = Arch {
    hf_names: &["Plamo3ForCausalLM", "PLaMo3ForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "plamo3",
    vocab: VocabKind::Own(set_vocab_plamo3),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnOut,
        Tensor::AttnPostNorm,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnPostNorm,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(plamo3_tensor),
        ..Rules::NONE
    },
    params: plamo3_params,
    extra: no_extra,
    hooks: Hooks {
        adjust: Some(plamo3_rope),
        ..Hooks::NONE
    },
};

/// The vocabulary file of both classes.
const VOCAB_FILE: &str = "tokenizer.jsonl";

/// The chat template file PLaMo 3 prefers to tokenizer_config.json's.
const TEMPLATE_FILE: &str = "chat_template.jinja";

/// The end-of-turn id the reference writes (`<|plamo:op|>` in the published vocabulary).
const EOT_ID: i128 = 4;

/// `1.0 / (5 ** 1.5)` as Python computes it: the post-MLP norm's offset.
const POST_MLP_SHIFT: f64 = 0.08944271909999159;

/// `hparams.get(key, default)` for a count: the default when absent, else the value, which
/// must be a non-negative integer (`add_uint32` of anything else fails).
fn get_u64(hp: &Hparams, key: &str, default: u64) -> Result<u64, ConvertError> {
    match hp.get(key) {
        None => Ok(default),
        Some(v) => json_u64(v)
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a non-negative integer", v)),
    }
}

/// `hparams.get(key, default)` for a float.
fn get_f64(hp: &Hparams, key: &str, default: f64) -> Result<f64, ConvertError> {
    match hp.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_f64()
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a number", v)),
    }
}

/// `hparams.get(key, default)` as the JSON value (the head counts are written as given).
fn get_json(hp: &Hparams, key: &str, default: u64) -> Json {
    hp.get(key).cloned().unwrap_or(Json::from(default))
}

/// Python's `a // b` and `a % b` on integers (floor division), `None` for `b == 0`.
fn py_divmod(a: i128, b: i128) -> Option<(i128, i128)> {
    if b == 0 {
        return None;
    }
    let (mut q, mut r) = (a / b, a % b);
    if r != 0 && ((r < 0) != (b < 0)) {
        q -= 1;
        r += b;
    }
    Some((q, r))
}

/// Which layers are Mamba layers (modeling_plamo.py's `is_mamba`): with `n` layers and a
/// `mamba_step` of `step`, layer `i` is attention when `i % step == step // 2`; with no more
/// layers than `step // 2`, only the last one is.
fn mamba_layers(hp: &Hparams, n: u64) -> Result<Vec<bool>, ConvertError> {
    let step = match hp.get("mamba_step") {
        None => 2,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, "mamba_step", "an integer", v))?,
    };
    let zero = || {
        ConvertError::out_of_range(
            &hp.path,
            "mamba_step",
            step,
            "a non-zero layer period (the layer index is taken modulo it)",
        )
    };
    let (half, _) = py_divmod(step.into(), 2).ok_or_else(zero)?;
    (0..n)
        .map(|i| {
            let i = i128::from(i);
            if i128::from(n) <= half {
                Ok(i != i128::from(n) - 1)
            } else {
                let (_, r) = py_divmod(i, step.into()).ok_or_else(zero)?;
                Ok(r != half)
            }
        })
        .collect()
}

/// `Plamo2Model.set_gguf_parameters`.
fn plamo2_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let n = p.block_count()?;
    if hp.get("mamba_enabled").is_none_or(json_truthy) {
        let kv = get_json(hp, "num_key_value_heads", 4);
        let heads = get_json(hp, "num_attention_heads", 32);
        let mamba = mamba_layers(hp, n)?;
        if !mamba.is_empty() {
            let per_layer = |v: &Json| {
                Json::Array(
                    mamba
                        .iter()
                        .map(|&m| if m { Json::from(0) } else { v.clone() })
                        .collect(),
                )
            };
            p.u32_or_list(attention::HEAD_COUNT_KV, &per_layer(&kv))?;
            p.u32_or_list(attention::HEAD_COUNT, &per_layer(&heads))?;
        }
    }
    p.u32(
        llm::CONTEXT_LENGTH,
        get_u64(hp, "max_position_embeddings", 2048)?,
    )?;
    p.u32(llm::EMBEDDING_LENGTH, get_u64(hp, "hidden_size", 4096)?)?;
    let head = get_u64(hp, "hidden_size_per_head", 128)?;
    p.u32(attention::KEY_LENGTH, head)?;
    p.u32(attention::VALUE_LENGTH, head)?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.f32(
        attention::LAYERNORM_RMS_EPS,
        get_f64(hp, "rms_norm_eps", 1e-6)?,
    );
    let theta = match hp.rope.get("rope_theta") {
        None => 10000.0,
        Some(v) => v
            .as_f64()
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, "rope_theta", "a number", v))?,
    };
    p.f32(rope::FREQ_BASE, theta);
    p.u32(ssm::STATE_SIZE, get_u64(hp, "mamba_d_state", 64)?)?;
    p.u32(ssm::CONV_KERNEL, get_u64(hp, "mamba_d_conv", 4)?)?;
    let mamba_heads = get_u64(hp, "mamba_num_heads", 64)?;
    p.u32(ssm::TIME_STEP_RANK, mamba_heads)?;
    let inner = mamba_heads.checked_mul(head).ok_or_else(|| {
        ConvertError::out_of_range(
            &hp.path,
            "mamba_num_heads * hidden_size_per_head (the SSM inner size)",
            format!("{mamba_heads} * {head}"),
            "a product that fits 64 bits",
        )
    })?;
    p.u32(ssm::INNER_SIZE, inner)?;
    p.u32(ssm::GROUP_COUNT, 0)?;
    p.u32(
        llm::FEED_FORWARD_LENGTH,
        get_u64(hp, "intermediate_size", 13312)?,
    )?;
    p.file_type();
    Ok(())
}

/// The offset the checkpoint's block norms are stored with (both classes).
fn block_norm_shift(name: &str) -> Option<f64> {
    if name.ends_with(".pre_mixer_norm.weight") || name.ends_with(".pre_mlp_norm.weight") {
        Some(1.0)
    } else if name.ends_with(".post_mixer_norm.weight") {
        Some(1.0 / 5.0)
    } else if name.ends_with(".post_mlp_norm.weight") {
        Some(POST_MLP_SHIFT)
    } else {
        None
    }
}

/// `name` with `suffix` replaced by `with`, when it ends with `suffix`.
fn renamed(name: &str, suffix: &str, with: &str) -> Option<String> {
    name.strip_suffix(suffix)
        .map(|base| format!("{base}{with}"))
}

/// `Plamo2Model.modify_tensors`.
fn plamo2_tensor(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with(".A_log") {
        return Ok(Modified::Pass(name, expr.neg_exp()));
    }
    for (suffix, with) in [
        (".dt_bias", ".dt_proj.bias"),
        (".dt_norm_weight", ".dt_norm.weight"),
        (".B_norm_weight", ".B_norm.weight"),
        (".C_norm_weight", ".C_norm.weight"),
        (".k_weight", ".k.weight"),
        (".q_weight", ".q.weight"),
    ] {
        if let Some(new) = renamed(&name, suffix, with) {
            return Ok(Modified::Pass(new, expr));
        }
    }
    if name.ends_with(".conv1d.weight") {
        let expr = expr.squeeze(&name)?;
        if expr.shape().len() != 2 {
            return Err(ConvertError::Tensor {
                name,
                problem: format!(
                    "conv1d weight of shape {:?} after squeezing, not 2-D",
                    expr.shape()
                ),
            });
        }
        return Ok(Modified::Pass(name, expr));
    }
    if let Some(shift) = block_norm_shift(&name) {
        return Ok(Modified::Pass(name, expr.add_scalar(shift as f32)));
    }
    if name.ends_with(".norm.weight") {
        return Ok(Modified::Pass(name, expr.add_scalar(1.0)));
    }
    Ok(Modified::Pass(name, expr))
}

/// `Plamo3Model.modify_tensors`.
fn plamo3_tensor(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let shift = block_norm_shift(&name).or_else(|| {
        let qk = name.ends_with(".mixer.q_norm.weight") || name.ends_with(".mixer.k_norm.weight");
        (qk || name.ends_with(".norm.weight")).then_some(1.0)
    });
    match shift {
        Some(s) => Ok(Modified::Pass(name, expr.add_scalar(s as f32))),
        None => Ok(Modified::Pass(name, expr)),
    }
}

/// `Plamo3Model.__init__`: a `rope_scaling_factor` other than 1 (the default) sets YaRN rope
/// parameters, with `initial_context_length` as the original context, unless the rope
/// parameters already name a type.
fn plamo3_rope(hp: &mut Hparams) -> Result<(), ConvertError> {
    let factor = match hp.get("rope_scaling_factor") {
        None => return Ok(()),
        Some(v) => v.clone(),
    };
    let is_one = match &factor {
        Json::Bool(b) => *b,
        v => v.as_f64() == Some(1.0),
    };
    if is_one || hp.rope.contains_key("rope_type") {
        return Ok(());
    }
    let factor = match &factor {
        Json::Bool(b) => f64::from(u8::from(*b)),
        v => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "rope_scaling_factor", "a number", v)
        })?,
    };
    let orig =
        match hp.get("initial_context_length") {
            None => return Err(ConvertError::missing_key(
                &hp.path,
                "initial_context_length",
                "PLaMo 3's YaRN scaling (rope_scaling_factor) takes its original context from it",
            )),
            Some(Json::Bool(b)) => i64::from(*b),
            Some(v) => match (v.as_i64(), v.as_f64()) {
                (Some(i), _) => i,
                // `int()` of a float truncates toward zero.
                (None, Some(f)) if f.is_finite() && f.abs() < 9.0e18 => f.trunc() as i64,
                _ => {
                    return Err(ConvertError::wrong_type(
                        &hp.path,
                        "initial_context_length",
                        "an integer",
                        v,
                    ))
                }
            },
        };
    let mut set = Map::new();
    set.insert("rope_type".into(), Json::from("yarn"));
    set.insert("factor".into(), Json::from(factor));
    set.insert("original_max_position_embeddings".into(), Json::from(orig));
    set.insert("beta_fast".into(), Json::from(32.0));
    set.insert("beta_slow".into(), Json::from(1.0));
    set.insert("truncate".into(), Json::from(false));
    hp.rope.extend(set);
    Ok(())
}

/// `Plamo3Model.set_gguf_parameters`: the generic block, the vocabulary size and the
/// sliding window.
fn plamo3_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let hp = p.hp;
    let window = match hp.find(&["window_size", "sliding_window"]) {
        None | Some(Json::Null) => return Ok(()),
        Some(v) => v.clone(),
    };
    let window = match window {
        Json::Bool(b) => u64::from(b),
        v => json_u64(&v).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "window_size", "a non-negative integer", &v)
        })?,
    };
    p.u32(attention::SLIDING_WINDOW, window)?;
    let pattern = hp.get("sliding_window_pattern").cloned().ok_or_else(|| {
        ConvertError::missing_key(
            &hp.path,
            "sliding_window_pattern",
            "PLaMo 3 writes it beside the sliding window",
        )
    })?;
    match &pattern {
        Json::Bool(b) => p.u32(attention::SLIDING_WINDOW_PATTERN, u64::from(*b))?,
        Json::Number(_) => {
            let n = json_u64(&pattern)
                .filter(|_| pattern.is_u64())
                .ok_or_else(|| {
                    ConvertError::wrong_type(
                        &hp.path,
                        "sliding_window_pattern",
                        "a non-negative integer or a list of flags",
                        &pattern,
                    )
                })?;
            p.u32(attention::SLIDING_WINDOW_PATTERN, n)?;
        }
        Json::Array(items) if items.iter().all(Json::is_boolean) => {
            let flags = items.iter().map(|b| b.as_bool() == Some(true)).collect();
            p.bools(attention::SLIDING_WINDOW_PATTERN, flags);
        }
        Json::Array(items) if items.iter().all(|x| x.as_i64().is_some()) => {
            p.u32_or_list(attention::SLIDING_WINDOW_PATTERN, &pattern)?;
        }
        v => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "sliding_window_pattern",
                "an integer or a list of flags",
                v,
            ))
        }
    }
    Ok(())
}

/// `gguf.TokenType` values.
mod t {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// A token type (`gguf.TokenType`) from a line's type field and text.
fn token_type(ty: Option<&Json>, text: &str) -> i32 {
    match ty.and_then(Json::as_str) {
        Some("UNKNOWN") => t::UNKNOWN,
        Some("CONTROL") => t::CONTROL,
        Some("BYTE") => t::BYTE,
        _ if text.starts_with("<|plamo:") && text.ends_with("|>") => t::CONTROL,
        _ => t::NORMAL,
    }
}

/// `float(x)` of a line's score: a number, a boolean or a numeric string.
fn score(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::Bool(b) => Some(f64::from(u8::from(*b))),
        Json::String(s) => {
            let s = s.trim();
            let lower = s.to_ascii_lowercase();
            match lower.trim_start_matches(['+', '-']) {
                "inf" | "infinity" | "nan" => {
                    let x = if lower.ends_with("nan") {
                        f64::NAN
                    } else {
                        f64::INFINITY
                    };
                    Some(if s.starts_with('-') { -x } else { x })
                }
                _ => s.replace('_', "").parse().ok(),
            }
        }
        _ => None,
    }
}

/// `_set_vocab_plamo` (see the module doc).
fn set_vocab_plamo(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let path = b.dir().join(VOCAB_FILE);
    if !path.is_file() {
        return Err(ConvertError::MissingFile {
            path,
            why: "the PLaMo vocabulary is read from this file".into(),
        });
    }
    let tc = b
        .tokenizer_config()
        .cloned()
        .ok_or_else(|| ConvertError::MissingFile {
            path: b.dir().tokenizer_config_path(),
            why: "the PLaMo vocabulary reads its special tokens from this file".into(),
        })?;
    // Read in text mode, as Python does: every line ending becomes "\n".
    let text = read_text(&path)?.replace("\r\n", "\n").replace('\r', "\n");
    let mut tokens = Vec::new();
    let mut scores = Vec::new();
    let mut types = Vec::new();
    let mut offset = 0u64;
    for line in text.split('\n') {
        let at = offset;
        offset += line.len() as u64 + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| ConvertError::format(&path, Some(at), what.to_string());
        let entry = parse_json(&path, line)?;
        let Json::Array(fields) = entry else {
            return Err(bad("a line that is not a JSON list"));
        };
        let Some(Json::String(token)) = fields.first() else {
            return Err(bad("a token that is not a string"));
        };
        let s = fields
            .get(1)
            .and_then(score)
            .ok_or_else(|| bad("a token without a numeric score"))?;
        types.push(token_type(fields.get(2), token));
        scores.push(s as f32);
        tokens.push(token.clone());
    }
    let size = match b.hparams().get("vocab_size") {
        None => {
            return Err(ConvertError::missing_key(
                b.dir().config_path(),
                "vocab_size",
                "the PLaMo vocabulary is padded to it",
            ))
        }
        Some(v) => json_u64(v).ok_or_else(|| {
            ConvertError::wrong_type(b.dir().config_path(), "vocab_size", "a count", v)
        })?,
    };
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    if size > crate::hf::tokenizer::MAX_VOCAB {
        return Err(ConvertError::VocabTooLarge {
            size: size as u64,
            max: crate::hf::tokenizer::MAX_VOCAB,
        });
    }
    for i in 1..=size.saturating_sub(tokens.len()) {
        tokens.push(format!("[PAD{i}]"));
        scores.push(-1000.0);
        types.push(t::UNUSED);
    }
    let mut ids = Vec::new();
    for (field, key) in [
        ("bos_token", tok::BOS_ID),
        ("eos_token", tok::EOS_ID),
        ("pad_token", tok::PAD_ID),
        ("sep_token", tok::SEP_ID),
        ("unk_token", tok::UNK_ID),
    ] {
        match tc.get(field) {
            None | Some(Json::Null) => {}
            Some(Json::String(s)) => {
                let id = tokens.iter().position(|t| t == s).ok_or_else(|| {
                    ConvertError::Other(format!(
                        "{}: {field} {s:?} is not in the vocabulary of {VOCAB_FILE}",
                        b.dir().tokenizer_config_path().display()
                    ))
                })?;
                ids.push((key, id as i128));
            }
            Some(v) => {
                return Err(ConvertError::wrong_type(
                    b.dir().tokenizer_config_path(),
                    field,
                    "a token's text",
                    v,
                ))
            }
        }
    }
    b.token_table("plamo2", tokens, Some(scores), types)?;
    for (key, id) in ids {
        b.set_token_id(key, id)?;
    }
    b.set_token_id(tok::EOT_ID, EOT_ID)?;
    b.set_bool(tok::ADD_SPACE_PREFIX, false);
    Ok((VocabPath::OwnTable, None))
}

/// `Plamo3Model.set_vocab`: the PLaMo vocabulary, then the chat template of
/// `chat_template.jinja`, else tokenizer_config.json's, when it is not empty.
fn set_vocab_plamo3(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let outcome = set_vocab_plamo(b)?;
    let mut template = b
        .tokenizer_config()
        .and_then(|tc| tc.get("chat_template"))
        .cloned();
    let path = b.dir().join(TEMPLATE_FILE);
    if path.is_file() {
        // Read in text mode, as Python does: every line ending becomes "\n".
        let text = read_text(&path)?.replace("\r\n", "\n").replace('\r', "\n");
        template = Some(Json::String(text));
    }
    if let Some(t) = template.filter(json_truthy) {
        b.add_chat_template(&t)?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::{py_divmod, score, POST_MLP_SHIFT};
    use serde_json::json;

    /// Floor division and modulo as Python's, none by zero.
    #[test]
    fn python_division() {
        assert_eq!(py_divmod(7, 2), Some((3, 1)));
        assert_eq!(py_divmod(-7, 2), Some((-4, 1)));
        assert_eq!(py_divmod(7, -2), Some((-4, -1)));
        assert_eq!(py_divmod(1, 0), None);
    }

    /// Scores are read as `float()` reads them.
    #[test]
    fn scores() {
        assert_eq!(score(&json!(-1.5)), Some(-1.5));
        assert_eq!(score(&json!(true)), Some(1.0));
        assert_eq!(score(&json!(" 2.5 ")), Some(2.5));
        assert_eq!(score(&json!("-inf")), Some(f64::NEG_INFINITY));
        assert_eq!(score(&json!(null)), None);
        assert!((POST_MLP_SHIFT - 1.0 / 5f64.powf(1.5)).abs() < 1e-16);
    }
}
