//! The one table that describes every GGML type.

use crate::formats;
use crate::types::GgmlType;

/// Quantizes one row: `src` holds `n_per_row` floats (a whole number of blocks), `dst` exactly
/// the row's bytes. `imatrix`, when given, has `n_per_row` importance weights (llama.cpp
/// passes the same vector for every row). Types that ignore the imatrix accept and ignore it.
pub type QuantizeRowFn = fn(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>);

/// Quantizes one row like [`QuantizeRowFn`], but may refuse it: the IQ lattice searches
/// meet inputs (infinities, NaN, values near `f32::MAX`) on which llama.cpp aborts.
pub type TryQuantizeRowFn =
    fn(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) -> Result<(), Unrepresentable>;

/// A block a quantizer cannot represent (llama.cpp aborts on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unrepresentable {
    /// The block's index within its row.
    pub block: usize,
    /// What went wrong.
    pub reason: &'static str,
}

impl std::fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "block {}: {}", self.block, self.reason)
    }
}

/// A row quantizer: one that always succeeds, or one that may refuse a row.
#[derive(Debug, Clone, Copy)]
pub enum Quantizer {
    /// Succeeds on every input.
    Total(QuantizeRowFn),
    /// May refuse a row it cannot represent.
    Partial(TryQuantizeRowFn),
}

impl Quantizer {
    /// Quantizes one row (see [`QuantizeRowFn`]).
    pub fn quantize_row(
        self,
        src: &[f32],
        dst: &mut [u8],
        imatrix: Option<&[f32]>,
    ) -> Result<(), Unrepresentable> {
        match self {
            Quantizer::Total(f) => {
                f(src, dst, imatrix);
                Ok(())
            }
            Quantizer::Partial(f) => f(src, dst, imatrix),
        }
    }
}

/// Dequantizes whole blocks: `src` holds `dst.len() / block_size` blocks.
pub type DequantizeRowFn = fn(src: &[u8], dst: &mut [f32]);

/// What ggml knows about one element type.
#[derive(Debug, Clone, Copy)]
pub struct TypeTraits {
    /// The type.
    pub ty: GgmlType,
    /// ggml's name (`ggml_type_name`).
    pub name: &'static str,
    /// Elements per block (1 for the plain float and integer types).
    pub block_size: usize,
    /// Bytes per block.
    pub type_size: usize,
    /// `ggml_quantize_requires_imatrix`: quantizing without an imatrix is refused.
    pub requires_imatrix: bool,
    /// The quantizer reads the imatrix when one is given (false for types that ignore it).
    pub uses_imatrix: bool,
    /// The row quantizer, if we can produce this type.
    pub quantize: Option<Quantizer>,
    /// The dequantizer, if we can read this type.
    pub dequantize: Option<DequantizeRowFn>,
}

impl TypeTraits {
    /// A type with no kernels (yet): geometry only.
    pub const fn geometry(
        ty: GgmlType,
        name: &'static str,
        block_size: usize,
        type_size: usize,
    ) -> TypeTraits {
        TypeTraits {
            ty,
            name,
            block_size,
            type_size,
            requires_imatrix: false,
            uses_imatrix: false,
            quantize: None,
            dequantize: None,
        }
    }
}

static TABLE: [&TypeTraits; 35] = [
    &formats::f32::TRAITS,
    &formats::f16::TRAITS,
    &formats::q4_0::TRAITS,
    &formats::q4_1::TRAITS,
    &formats::q5_0::TRAITS,
    &formats::q5_1::TRAITS,
    &formats::q8_0::TRAITS,
    &formats::q8_1::TRAITS,
    &formats::q2_k::TRAITS,
    &formats::q3_k::TRAITS,
    &formats::q4_k::TRAITS,
    &formats::q5_k::TRAITS,
    &formats::q6_k::TRAITS,
    &formats::q8_k::TRAITS,
    &formats::iq2_xxs::TRAITS,
    &formats::iq2_xs::TRAITS,
    &formats::iq3_xxs::TRAITS,
    &formats::iq1_s::TRAITS,
    &formats::iq4_nl::TRAITS,
    &formats::iq3_s::TRAITS,
    &formats::iq2_s::TRAITS,
    &formats::iq4_xs::TRAITS,
    &formats::ints::I8,
    &formats::ints::I16,
    &formats::ints::I32,
    &formats::ints::I64,
    &formats::ints::F64,
    &formats::iq1_m::TRAITS,
    &formats::bf16::TRAITS,
    &formats::tq1_0::TRAITS,
    &formats::tq2_0::TRAITS,
    &formats::mxfp4::TRAITS,
    &formats::nvfp4::TRAITS,
    &formats::q1_0::TRAITS,
    &formats::q2_0::TRAITS,
];

/// The traits of `ty`.
pub fn traits(ty: GgmlType) -> &'static TypeTraits {
    let idx = GgmlType::ALL
        .iter()
        .position(|t| *t == ty)
        .expect("every GgmlType is in GgmlType::ALL");
    TABLE[idx]
}

/// Every type's traits, in id order.
pub fn all_types() -> impl Iterator<Item = &'static TypeTraits> {
    TABLE.iter().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_enum_order_and_ids() {
        for (t, tr) in GgmlType::ALL.iter().zip(TABLE.iter()) {
            assert_eq!(*t, tr.ty, "registry row for {:?} is out of order", t);
        }
    }

    #[test]
    fn geometry_matches_ggml() {
        let expect: &[(GgmlType, &str, usize, usize)] = &[
            (GgmlType::F32, "f32", 1, 4),
            (GgmlType::F16, "f16", 1, 2),
            (GgmlType::Q4_0, "q4_0", 32, 18),
            (GgmlType::Q4_1, "q4_1", 32, 20),
            (GgmlType::Q5_0, "q5_0", 32, 22),
            (GgmlType::Q5_1, "q5_1", 32, 24),
            (GgmlType::Q8_0, "q8_0", 32, 34),
            (GgmlType::Q8_1, "q8_1", 32, 36),
            (GgmlType::Q2_K, "q2_K", 256, 84),
            (GgmlType::Q3_K, "q3_K", 256, 110),
            (GgmlType::Q4_K, "q4_K", 256, 144),
            (GgmlType::Q5_K, "q5_K", 256, 176),
            (GgmlType::Q6_K, "q6_K", 256, 210),
            (GgmlType::Q8_K, "q8_K", 256, 292),
            (GgmlType::IQ2_XXS, "iq2_xxs", 256, 66),
            (GgmlType::IQ2_XS, "iq2_xs", 256, 74),
            (GgmlType::IQ3_XXS, "iq3_xxs", 256, 98),
            (GgmlType::IQ1_S, "iq1_s", 256, 50),
            (GgmlType::IQ4_NL, "iq4_nl", 32, 18),
            (GgmlType::IQ3_S, "iq3_s", 256, 110),
            (GgmlType::IQ2_S, "iq2_s", 256, 82),
            (GgmlType::IQ4_XS, "iq4_xs", 256, 136),
            (GgmlType::I8, "i8", 1, 1),
            (GgmlType::I16, "i16", 1, 2),
            (GgmlType::I32, "i32", 1, 4),
            (GgmlType::I64, "i64", 1, 8),
            (GgmlType::F64, "f64", 1, 8),
            (GgmlType::IQ1_M, "iq1_m", 256, 56),
            (GgmlType::BF16, "bf16", 1, 2),
            (GgmlType::TQ1_0, "tq1_0", 256, 54),
            (GgmlType::TQ2_0, "tq2_0", 256, 66),
            (GgmlType::MXFP4, "mxfp4", 32, 17),
            (GgmlType::NVFP4, "nvfp4", 64, 36),
            (GgmlType::Q1_0, "q1_0", 128, 18),
            (GgmlType::Q2_0, "q2_0", 64, 18),
        ];
        assert_eq!(expect.len(), GgmlType::ALL.len());
        for &(t, name, bs, ts) in expect {
            let tr = traits(t);
            assert_eq!(
                (tr.name, tr.block_size, tr.type_size),
                (name, bs, ts),
                "{t:?}"
            );
            assert_eq!(GgmlType::from_name(&name.to_uppercase()), Some(t));
            assert_eq!(GgmlType::from_id(t.id()), Some(t));
        }
        assert_eq!(GgmlType::from_id(4), None);
        assert_eq!(GgmlType::from_id(31), None);
    }
}
