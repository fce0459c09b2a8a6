//! `--outtype` → `general.file_type` and the GGML type of each output tensor (`prepare_tensors`).

use ggufkit::quantize::ftype::{ft, LlamaFtype};
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
    /// The outtypes that name a file type (all but `Auto`).
    const NAMED: [OutType; 6] = [
        OutType::F32,
        OutType::F16,
        OutType::Bf16,
        OutType::Q8_0,
        OutType::Tq1_0,
        OutType::Tq2_0,
    ];

    /// Parses a `--outtype` value.
    pub fn parse(s: &str) -> Option<OutType> {
        if s.eq_ignore_ascii_case("auto") {
            return Some(OutType::Auto);
        }
        let row = LlamaFtype::by_outtype(s)?;
        OutType::NAMED.into_iter().find(|o| o.ftype() == row)
    }

    /// The file type's row in the core table; `Auto` stands for f16 until resolved.
    fn ftype(self) -> &'static LlamaFtype {
        let ft = match self {
            OutType::F32 => ft::F32,
            OutType::F16 | OutType::Auto => ft::F16,
            OutType::Bf16 => ft::BF16,
            OutType::Q8_0 => ft::Q8_0,
            OutType::Tq1_0 => ft::TQ1_0,
            OutType::Tq2_0 => ft::TQ2_0,
        };
        LlamaFtype::by_id(ft).expect("every outtype has a file type row")
    }

    /// `general.file_type` (`LlamaFileType`); `Auto` must be resolved first.
    pub fn file_type(self) -> u32 {
        self.ftype().id
    }

    /// The encoding part of the default file name (`F16`, `BF16`, `Q8_0`, …).
    pub fn label(self) -> &'static str {
        self.ftype().name
    }

    /// The type of a tensor that follows the outtype.
    fn ggml(self) -> GgmlType {
        self.ftype()
            .default_type
            .expect("an outtype's file type is not removed")
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
    "blk.{bid}.altup_correct_coef",
    "blk.{bid}.altup_predict_coef",
];

/// Tensors stored as F16 under the ternary outtypes.
const F16_UNDER_TERNARY: &[&str] = &[
    "token_embd",
    "per_layer_token_embd",
    "output",
    "blk.{bid}.altup_router",
    "blk.{bid}.laurel_l",
    "blk.{bid}.laurel_r",
];

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

/// The type of an output tensor of 2 or more dimensions made from a weight the checkpoint
/// held in FP8, under `--fp8-as-q8` (`tensor_force_quant` gives Q8_0): F32 for a norm, as
/// always; Q8_0 otherwise, or F16 when its rows are not whole Q8_0 blocks (gguf-py's
/// fallback).
pub fn forced_q8(name: &str, row: u64) -> GgmlType {
    if name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    if !row.is_multiple_of(GgmlType::Q8_0.block_size() as u64) {
        return GgmlType::F16;
    }
    GgmlType::Q8_0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outtypes_follow_the_file_type_table() {
        for o in OutType::NAMED {
            let row = o.ftype();
            assert_eq!(OutType::parse(row.outtype.unwrap()), Some(o));
            assert_eq!(
                OutType::parse(&row.outtype.unwrap().to_uppercase()),
                Some(o)
            );
            assert_eq!(o.ggml().name(), row.outtype.unwrap());
        }
        assert_eq!(OutType::parse("AUTO"), Some(OutType::Auto));
        assert_eq!(OutType::parse("q4_0"), None);
        assert_eq!(
            (OutType::Auto.file_type(), OutType::Auto.label()),
            (1, "F16")
        );
        assert_eq!(
            (OutType::Bf16.file_type(), OutType::Bf16.label()),
            (32, "BF16")
        );
        assert_eq!(
            (OutType::Tq2_0.file_type(), OutType::Tq2_0.label()),
            (37, "TQ2_0")
        );
    }

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
