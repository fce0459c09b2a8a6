//! `--outtype` → `general.file_type` and the GGML type of each output tensor (`prepare_tensors`).

use ggufkit::quantizers::GgmlType;

use super::safetensors::StDtype;

/// The requested output type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutType {
    /// Everything F32.
    F32,
    /// Matrices F16.
    F16,
    /// Matrices BF16.
    Bf16,
    /// Matrices Q8_0.
    Q8_0,
    /// Matrices TQ1_0 (ternary models).
    Tq1_0,
    /// Matrices TQ2_0 (ternary models).
    Tq2_0,
    /// BF16 or F16, from the first 2-D+ tensor's dtype (F16 if none is either).
    Auto,
}

impl OutType {
    /// Parses a `--outtype` value.
    pub fn parse(s: &str) -> Option<OutType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "f32" => OutType::F32,
            "f16" => OutType::F16,
            "bf16" => OutType::Bf16,
            "q8_0" => OutType::Q8_0,
            "tq1_0" => OutType::Tq1_0,
            "tq2_0" => OutType::Tq2_0,
            "auto" => OutType::Auto,
            _ => return None,
        })
    }

    /// `general.file_type` (`LlamaFileType`); `Auto` must be resolved first.
    pub fn file_type(self) -> u32 {
        match self {
            OutType::F32 => 0,
            OutType::F16 | OutType::Auto => 1,
            OutType::Bf16 => 32,
            OutType::Q8_0 => 7,
            OutType::Tq1_0 => 36,
            OutType::Tq2_0 => 37,
        }
    }

    /// The encoding part of the default file name (`F16`, `BF16`, `Q8_0`, …).
    pub fn label(self) -> &'static str {
        match self {
            OutType::F32 => "F32",
            OutType::F16 | OutType::Auto => "F16",
            OutType::Bf16 => "BF16",
            OutType::Q8_0 => "Q8_0",
            OutType::Tq1_0 => "TQ1_0",
            OutType::Tq2_0 => "TQ2_0",
        }
    }

    /// The type of a tensor that follows the outtype.
    fn ggml(self) -> GgmlType {
        match self {
            OutType::F32 => GgmlType::F32,
            OutType::F16 | OutType::Auto => GgmlType::F16,
            OutType::Bf16 => GgmlType::BF16,
            OutType::Q8_0 => GgmlType::Q8_0,
            OutType::Tq1_0 => GgmlType::TQ1_0,
            OutType::Tq2_0 => GgmlType::TQ2_0,
        }
    }
}

/// Resolves `auto` from the source dtypes of the model's tensors with at least 2 dims, in
/// order: the first BF16 gives bf16, the first F16 gives f16, otherwise f16.
pub fn resolve_auto(tensors: impl Iterator<Item = (usize, StDtype)>) -> OutType {
    for (ndim, dtype) in tensors {
        if ndim < 2 {
            continue;
        }
        match dtype {
            StDtype::Bf16 => return OutType::Bf16,
            StDtype::F16 => return OutType::F16,
            _ => {}
        }
    }
    OutType::F16
}

/// Tensors always stored as F32 (`match_model_tensor_name` against these keys).
const ALWAYS_F32: &[&str] = &[
    "blk.{bid}.ffn_gate_inp",
    "blk.{bid}.ffn_gate_inp_shexp",
    "position_embd",
    "token_types",
    "blk.{bid}.ssm_conv1d",
    "blk.{bid}.shortconv.conv",
];

/// Tensors stored as F16 under the ternary outtypes.
const F16_UNDER_TERNARY: &[&str] = &["token_embd", "per_layer_token_embd", "output"];

fn matches_key(name: &str, key: &str, bid: Option<u64>) -> bool {
    let full = match (key.contains("{bid}"), bid) {
        (true, Some(b)) => key.replace("{bid}", &b.to_string()),
        (false, None) => key.to_string(),
        _ => return false,
    };
    name.strip_suffix(".weight") == Some(full.as_str())
}

/// The GGML type of output tensor `name` with `n_dims` dimensions and last (innermost)
/// dimension `row`; `bid` is the block id of its HF source name.
pub fn choose(outtype: OutType, name: &str, n_dims: usize, row: u64, bid: Option<u64>) -> GgmlType {
    if n_dims <= 1 || name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    let suffix_ok = [".weight", ".lora_a", ".lora_b"]
        .iter()
        .any(|s| name.len() >= 7 && &name[name.len() - 7..] == *s);
    if !suffix_ok || ALWAYS_F32.iter().any(|k| matches_key(name, k, bid)) {
        return GgmlType::F32;
    }
    let ternary = matches!(outtype, OutType::Tq1_0 | OutType::Tq2_0);
    let ty = if ternary && F16_UNDER_TERNARY.iter().any(|k| matches_key(name, k, bid)) {
        GgmlType::F16
    } else {
        outtype.ggml()
    };
    // Block types need whole blocks per row; gguf-py falls back to F16.
    if !row.is_multiple_of(ty.block_size() as u64) {
        return GgmlType::F16;
    }
    ty
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_rules() {
        let q = OutType::Q8_0;
        assert_eq!(
            choose(q, "blk.0.attn_norm.weight", 1, 64, Some(0)),
            GgmlType::F32
        );
        assert_eq!(
            choose(q, "blk.0.attn_q.bias", 1, 64, Some(0)),
            GgmlType::F32
        );
        assert_eq!(
            choose(q, "blk.0.attn_q.weight", 2, 64, Some(0)),
            GgmlType::Q8_0
        );
        assert_eq!(
            choose(q, "blk.0.attn_q.weight", 2, 48, Some(0)),
            GgmlType::F16
        );
        assert_eq!(
            choose(q, "blk.1.ffn_gate_inp.weight", 2, 64, Some(1)),
            GgmlType::F32
        );
        assert_eq!(
            choose(q, "position_embd.weight", 2, 64, None),
            GgmlType::F32
        );
        assert_eq!(choose(q, "token_embd.weight", 2, 64, None), GgmlType::Q8_0);
        let t = OutType::Tq1_0;
        assert_eq!(choose(t, "token_embd.weight", 2, 256, None), GgmlType::F16);
        assert_eq!(
            choose(t, "blk.0.ffn_up.weight", 2, 256, Some(0)),
            GgmlType::TQ1_0
        );
        assert_eq!(
            choose(t, "blk.0.ffn_up.weight", 2, 128, Some(0)),
            GgmlType::F16
        );
        assert_eq!(
            choose(OutType::F32, "blk.0.ffn_up.weight", 2, 3, Some(0)),
            GgmlType::F32
        );
    }
}
