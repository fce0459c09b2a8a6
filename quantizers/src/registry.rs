//! The one table that describes every GGML type: one row each (see [`crate::type_table`]
//! for the columns). Adding a type is its kernel file in `formats/` plus one row here.

use std::fmt;

use crate::formats;
use crate::kernel::{DequantizeRowFn, Quantizer};

ggml_types! {
    removed {
        Q4_2 = 4, Q4_3 = 5,
        Q4_0_4_4 = 31, Q4_0_4_8 = 32, Q4_0_8_8 = 33,
        IQ4_NL_4_4 = 36, IQ4_NL_4_8 = 37, IQ4_NL_8_8 = 38,
    }
    F32     = 0,  "f32",     float, block 1,   bytes 4,   imatrix ignored,  kernels Total(f32);
    F16     = 1,  "f16",     float, block 1,   bytes 2,   imatrix ignored,  kernels Total(f16);
    Q4_0    = 2,  "q4_0",    quant, block 32,  bytes 18,  imatrix uses,     kernels Total(q4_0);
    Q4_1    = 3,  "q4_1",    quant, block 32,  bytes 20,  imatrix uses,     kernels Total(q4_1);
    Q5_0    = 6,  "q5_0",    quant, block 32,  bytes 22,  imatrix uses,     kernels Total(q5_0);
    Q5_1    = 7,  "q5_1",    quant, block 32,  bytes 24,  imatrix uses,     kernels Total(q5_1);
    Q8_0    = 8,  "q8_0",    quant, block 32,  bytes 34,  imatrix ignored,  kernels Total(q8_0);
    Q8_1    = 9,  "q8_1",    quant, block 32,  bytes 36,  imatrix ignored,  kernels Total(q8_1);
    Q2_K    = 10, "q2_K",    quant, block 256, bytes 84,  imatrix uses,     kernels Total(q2_k);
    Q3_K    = 11, "q3_K",    quant, block 256, bytes 110, imatrix uses,     kernels Total(q3_k);
    Q4_K    = 12, "q4_K",    quant, block 256, bytes 144, imatrix uses,     kernels Total(q4_k);
    Q5_K    = 13, "q5_K",    quant, block 256, bytes 176, imatrix uses,     kernels Total(q5_k);
    Q6_K    = 14, "q6_K",    quant, block 256, bytes 210, imatrix uses,     kernels Total(q6_k);
    Q8_K    = 15, "q8_K",    quant, block 256, bytes 292, imatrix ignored,  kernels Total(q8_k);
    IQ2_XXS = 16, "iq2_xxs", quant, block 256, bytes 66,  imatrix requires, kernels Partial(iq2_xxs);
    IQ2_XS  = 17, "iq2_xs",  quant, block 256, bytes 74,  imatrix requires, kernels Partial(iq2_xs);
    IQ3_XXS = 18, "iq3_xxs", quant, block 256, bytes 98,  imatrix uses,     kernels Partial(iq3_xxs);
    IQ1_S   = 19, "iq1_s",   quant, block 256, bytes 50,  imatrix requires, kernels Partial(iq1_s);
    IQ4_NL  = 20, "iq4_nl",  quant, block 32,  bytes 18,  imatrix uses,     kernels Total(iq4_nl);
    IQ3_S   = 21, "iq3_s",   quant, block 256, bytes 110, imatrix uses,     kernels Partial(iq3_s);
    IQ2_S   = 22, "iq2_s",   quant, block 256, bytes 82,  imatrix uses,     kernels Partial(iq2_s);
    IQ4_XS  = 23, "iq4_xs",  quant, block 256, bytes 136, imatrix uses,     kernels Total(iq4_xs);
    I8      = 24, "i8",      int,   block 1,   bytes 1,   imatrix ignored,  kernels none;
    I16     = 25, "i16",     int,   block 1,   bytes 2,   imatrix ignored,  kernels none;
    I32     = 26, "i32",     int,   block 1,   bytes 4,   imatrix ignored,  kernels none;
    I64     = 27, "i64",     int,   block 1,   bytes 8,   imatrix ignored,  kernels none;
    F64     = 28, "f64",     float, block 1,   bytes 8,   imatrix ignored,  kernels none;
    IQ1_M   = 29, "iq1_m",   quant, block 256, bytes 56,  imatrix uses,     kernels Partial(iq1_m);
    BF16    = 30, "bf16",    float, block 1,   bytes 2,   imatrix ignored,  kernels Total(bf16);
    TQ1_0   = 34, "tq1_0",   quant, block 256, bytes 54,  imatrix ignored,  kernels Total(tq1_0);
    TQ2_0   = 35, "tq2_0",   quant, block 256, bytes 66,  imatrix ignored,  kernels Total(tq2_0);
    MXFP4   = 39, "mxfp4",   quant, block 32,  bytes 17,  imatrix ignored,  kernels Total(mxfp4);
    NVFP4   = 40, "nvfp4",   quant, block 64,  bytes 36,  imatrix ignored,  kernels Total(nvfp4);
    Q1_0    = 41, "q1_0",    quant, block 128, bytes 18,  imatrix ignored,  kernels Total(q1_0);
    Q2_0    = 42, "q2_0",    quant, block 64,  bytes 18,  imatrix ignored,  kernels Total(q2_0);
}

/// What ggml knows about one element type (its row of the table).
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

/// The traits of `ty`.
pub fn traits(ty: GgmlType) -> &'static TypeTraits {
    &TABLE[ty.row()]
}

/// Every type's traits, in id order.
pub fn all_types() -> impl Iterator<Item = &'static TypeTraits> {
    TABLE.iter()
}

impl GgmlType {
    /// Parses a type name case-insensitively (`Q4_K`, `q4_k`, `bf16`).
    pub fn from_name(name: &str) -> Option<GgmlType> {
        GgmlType::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_follow_the_ids() {
        for (row, (t, tr)) in GgmlType::ALL.iter().zip(TABLE.iter()).enumerate() {
            assert_eq!(*t, tr.ty, "row {row} holds {:?}", tr.ty);
            assert_eq!(t.row(), row, "{t:?}");
            assert_eq!(traits(*t).ty, *t);
        }
        assert!(GgmlType::ALL.windows(2).all(|w| w[0].id() < w[1].id()));
    }

    /// Every id up to the highest is a type or a removed one, never both: a type ggml adds
    /// in the middle of the range cannot be forgotten.
    #[test]
    fn every_id_is_a_type_or_removed() {
        let max = GgmlType::ALL.iter().map(|t| t.id()).max().unwrap();
        for id in 0..=max + 8 {
            let removed = GgmlType::REMOVED.iter().find(|r| r.0 == id);
            match (GgmlType::from_id(id), removed) {
                (Some(t), None) => assert_eq!(t.id(), id),
                (None, Some(_)) => {}
                (None, None) => assert!(id > max, "id {id} is neither a type nor removed"),
                (Some(t), Some(r)) => panic!("id {id} is both {t} and removed {}", r.1),
            }
        }
    }

    #[test]
    fn names_round_trip_and_are_unique() {
        for &t in &GgmlType::ALL {
            assert_eq!(GgmlType::from_name(t.name()), Some(t));
            assert_eq!(GgmlType::from_name(&t.name().to_uppercase()), Some(t));
            assert_eq!(t.to_string(), t.name());
            assert_eq!(traits(t).name, t.name());
            assert_eq!(format!("{t:?}").to_lowercase(), t.name().to_lowercase());
        }
        for &(_, removed) in GgmlType::REMOVED {
            assert_eq!(GgmlType::from_name(removed), None, "{removed}");
        }
    }

    /// Every block-quantized type and every float type but f64 has both kernels; the
    /// integer types and f64 have none. The imatrix flags agree with each other.
    #[test]
    fn kernels_cover_the_convertible_types() {
        for tr in all_types() {
            let t = tr.ty;
            let convertible = t.is_quantized() || (t.is_float() && t != GgmlType::F64);
            assert_eq!(tr.quantize.is_some(), convertible, "{t}");
            assert_eq!(tr.dequantize.is_some(), convertible, "{t}");
            assert!(!tr.requires_imatrix || tr.uses_imatrix, "{t}");
            assert!(!tr.uses_imatrix || t.is_quantized(), "{t}");
            if !t.is_quantized() {
                assert_eq!(tr.block_size, 1, "{t}");
            }
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
            assert_eq!((t.block_size(), t.type_size()), (bs, ts), "{t:?}");
            assert_eq!(GgmlType::from_name(&name.to_uppercase()), Some(t));
            assert_eq!(GgmlType::from_id(t.id()), Some(t));
        }
        assert_eq!(GgmlType::from_id(4), None);
        assert_eq!(GgmlType::from_id(31), None);
    }
}
