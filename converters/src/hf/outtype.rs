//! `--outtype` → `general.file_type` and the GGML type of each output tensor (`prepare_tensors`).

use ggufkit::quantize::ftype::{ft, LlamaFtype, LLAMA_FTYPES};
use ggufkit::quantizers::GgmlType;

use super::safetensors::StDtype;

/// The requested output type: a row of the file-type table that names a converter
/// outtype ([`LlamaFtype::outtype`]), or `auto`. The table is the only list of outtypes:
/// a file type gains an `outtype("…")` there and `--outtype` accepts it, names it in its
/// messages and writes it, with nothing to add here.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct OutType(Kind);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The file type's id; its row has an `outtype` name.
    Ftype(u32),
    /// BF16 or F16, from the first 2-D+ tensor's dtype (F16 if none is either).
    Auto,
}

// The outtypes code names for a rule of its own (a LoRA adapter's choices, the ternary
// types' F16 embeddings), spelled as convert_hf_to_gguf.py's `--outtype` names them.
#[allow(non_upper_case_globals)]
impl OutType {
    /// Everything F32.
    pub const F32: OutType = OutType(Kind::Ftype(ft::F32));
    /// Matrices F16.
    pub const F16: OutType = OutType(Kind::Ftype(ft::F16));
    /// Matrices BF16.
    pub const Bf16: OutType = OutType(Kind::Ftype(ft::BF16));
    /// Matrices Q8_0.
    pub const Q8_0: OutType = OutType(Kind::Ftype(ft::Q8_0));
    /// Matrices TQ1_0 (ternary models).
    pub const Tq1_0: OutType = OutType(Kind::Ftype(ft::TQ1_0));
    /// Matrices TQ2_0 (ternary models).
    pub const Tq2_0: OutType = OutType(Kind::Ftype(ft::TQ2_0));
    /// BF16 or F16, from the first 2-D+ tensor's dtype (F16 if none is either).
    pub const Auto: OutType = OutType(Kind::Auto);
}

impl OutType {
    /// Every outtype, in the file-type table's order, then `auto`.
    pub fn all() -> impl Iterator<Item = OutType> {
        LLAMA_FTYPES
            .iter()
            .filter(|row| row.outtype.is_some())
            .map(|row| OutType(Kind::Ftype(row.id)))
            .chain(std::iter::once(OutType::Auto))
    }

    /// Every outtype's name, comma-separated (`f32, f16, …, auto`), for help and messages.
    pub fn names() -> String {
        OutType::all()
            .map(OutType::name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Parses a `--outtype` value (case-insensitive).
    pub fn parse(s: &str) -> Option<OutType> {
        if s.eq_ignore_ascii_case("auto") {
            return Some(OutType::Auto);
        }
        LlamaFtype::by_outtype(s).map(|row| OutType(Kind::Ftype(row.id)))
    }

    /// The `--outtype` name (`f16`, `auto`, …).
    pub fn name(self) -> &'static str {
        match self.0 {
            Kind::Auto => "auto",
            Kind::Ftype(_) => self.ftype().outtype.unwrap_or(""),
        }
    }

    /// The file type's row in the core table; `Auto` stands for f16 until resolved.
    fn ftype(self) -> &'static LlamaFtype {
        let id = match self.0 {
            Kind::Ftype(id) => id,
            Kind::Auto => ft::F16,
        };
        LlamaFtype::by_id(id).expect("an outtype is a row of the file type table")
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

    /// Whether the matrices are stored as ternary blocks (TQ1_0, TQ2_0), under which the
    /// embeddings and the output stay F16 ([`choose`]).
    fn is_ternary(self) -> bool {
        matches!(self.ggml(), GgmlType::TQ1_0 | GgmlType::TQ2_0)
    }
}

/// As the variant names of the converter's outtypes were spelled: `F16`, `Bf16`, `Q8_0`,
/// `Auto`.
impl std::fmt::Debug for OutType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.name();
        let mut chars = name.chars();
        if let Some(c) = chars.next() {
            write!(f, "{}{}", c.to_ascii_uppercase(), chars.as_str())?;
        }
        Ok(())
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
    "blk.{bid}.ssm_conv1d_q",
    "blk.{bid}.ssm_conv1d_k",
    "blk.{bid}.ssm_conv1d_v",
    "blk.{bid}.indexer.proj",
    "blk.{bid}.time_mix_first",
    "blk.{bid}.time_mix_w1",
    "blk.{bid}.time_mix_w2",
    "blk.{bid}.time_mix_decay_w1",
    "blk.{bid}.time_mix_decay_w2",
    "blk.{bid}.time_mix_lerp_fused",
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
    let ternary = outtype.is_ternary();
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

/// The type of output tensor `name` for a class whose `tensor_force_quant` asks for the
/// outtype's type for every tensor of 2 or more dimensions: F32 for 1-D tensors and norms,
/// else the outtype's type (F16 when its rows are not whole blocks), whatever the name.
pub fn choose_forced(outtype: OutType, name: &str, n_dims: usize, row: u64) -> GgmlType {
    if n_dims <= 1 || name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    let ty = outtype.ggml();
    if !row.is_multiple_of(ty.block_size() as u64) {
        return GgmlType::F16;
    }
    ty
}

/// The type a class's `tensor_force_quant` asked for (`ty`), after `prepare_tensors`' own
/// rules: F32 for 1-D tensors and norms, F16 when a row is not whole blocks of `ty` (gguf-py
/// raises and the reference falls back to F16).
pub fn class_forced(ty: GgmlType, name: &str, n_dims: usize, row: u64) -> GgmlType {
    if n_dims <= 1 || name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
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
        let named: Vec<OutType> = OutType::all().filter(|o| *o != OutType::Auto).collect();
        assert_eq!(
            named,
            [
                OutType::F32,
                OutType::F16,
                OutType::Q8_0,
                OutType::Bf16,
                OutType::Tq1_0,
                OutType::Tq2_0
            ]
        );
        for o in named {
            let row = o.ftype();
            assert_eq!(OutType::parse(row.outtype.unwrap()), Some(o));
            assert_eq!(
                OutType::parse(&row.outtype.unwrap().to_uppercase()),
                Some(o)
            );
            assert_eq!(o.ggml().name(), row.outtype.unwrap());
            assert_eq!(o.name(), row.outtype.unwrap());
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
        assert_eq!(OutType::names(), "f32, f16, q8_0, bf16, tq1_0, tq2_0, auto");
        assert_eq!(format!("{:?}", OutType::Tq1_0), "Tq1_0");
        assert_eq!(format!("{:?}", OutType::Auto), "Auto");
        assert!(OutType::Tq2_0.is_ternary() && !OutType::Q8_0.is_ternary());
    }

    /// A class forcing its matrices to the outtype quantizes a router too; norms, 1-D
    /// tensors and rows that are not whole blocks keep the usual exceptions.
    #[test]
    fn forced_matrix_rules() {
        let q = OutType::Q8_0;
        let router = "blk.1.ffn_gate_inp.weight";
        assert_eq!(choose(q, router, 2, 64, Some(1)), GgmlType::F32);
        assert_eq!(choose_forced(q, router, 2, 64), GgmlType::Q8_0);
        assert_eq!(choose_forced(OutType::F16, router, 2, 16), GgmlType::F16);
        assert_eq!(choose_forced(q, router, 2, 48), GgmlType::F16);
        assert_eq!(
            choose_forced(q, "blk.0.attn_output_norm.weight", 2, 64),
            GgmlType::F32
        );
        assert_eq!(choose_forced(q, "blk.0.attn_q.bias", 1, 64), GgmlType::F32);
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
        // The sparse-attention indexer's head weights and Kimi's q/k/v convolutions.
        assert_eq!(
            choose(q, "blk.2.indexer.proj.weight", 2, 64, Some(2)),
            GgmlType::F32
        );
        assert_eq!(
            choose(q, "blk.0.ssm_conv1d_k.weight", 2, 64, Some(0)),
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
