//! The GGML tensor element types with their on-disk ids.

use std::fmt;

/// A GGML tensor element type. The discriminant is the id stored in GGUF tensor infos.
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum GgmlType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
    NVFP4 = 40,
    Q1_0 = 41,
    Q2_0 = 42,
}

impl GgmlType {
    /// Every type, in id order.
    pub const ALL: [GgmlType; 35] = [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::Q8_1,
        GgmlType::Q2_K,
        GgmlType::Q3_K,
        GgmlType::Q4_K,
        GgmlType::Q5_K,
        GgmlType::Q6_K,
        GgmlType::Q8_K,
        GgmlType::IQ2_XXS,
        GgmlType::IQ2_XS,
        GgmlType::IQ3_XXS,
        GgmlType::IQ1_S,
        GgmlType::IQ4_NL,
        GgmlType::IQ3_S,
        GgmlType::IQ2_S,
        GgmlType::IQ4_XS,
        GgmlType::I8,
        GgmlType::I16,
        GgmlType::I32,
        GgmlType::I64,
        GgmlType::F64,
        GgmlType::IQ1_M,
        GgmlType::BF16,
        GgmlType::TQ1_0,
        GgmlType::TQ2_0,
        GgmlType::MXFP4,
        GgmlType::NVFP4,
        GgmlType::Q1_0,
        GgmlType::Q2_0,
    ];

    /// The type with GGUF id `id`, if it is one ggml still knows.
    pub fn from_id(id: u32) -> Option<GgmlType> {
        GgmlType::ALL.iter().copied().find(|t| *t as u32 == id)
    }

    /// The GGUF/ggml id.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// ggml's name for the type (`ggml_type_name`), e.g. `q4_K`, `bf16`.
    pub fn name(self) -> &'static str {
        crate::traits(self).name
    }

    /// Parses a type name case-insensitively (`Q4_K`, `q4_k`, `bf16`).
    pub fn from_name(name: &str) -> Option<GgmlType> {
        GgmlType::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Elements per block.
    pub fn block_size(self) -> usize {
        crate::traits(self).block_size
    }

    /// Bytes per block.
    pub fn type_size(self) -> usize {
        crate::traits(self).type_size
    }

    /// True for the plain float types (F32, F16, BF16, F64).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 | GgmlType::F64
        )
    }

    /// True for block-quantized types (everything but the float and integer types).
    pub fn is_quantized(self) -> bool {
        !self.is_float()
            && !matches!(
                self,
                GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64
            )
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
