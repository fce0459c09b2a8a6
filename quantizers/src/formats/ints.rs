//! The plain integer types and f64: stored as-is, never quantized by llama-quantize.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for i8.
pub(crate) const I8: TypeTraits = TypeTraits::geometry(GgmlType::I8, "i8", 1, 1);
/// Registry entry for i16.
pub(crate) const I16: TypeTraits = TypeTraits::geometry(GgmlType::I16, "i16", 1, 2);
/// Registry entry for i32.
pub(crate) const I32: TypeTraits = TypeTraits::geometry(GgmlType::I32, "i32", 1, 4);
/// Registry entry for i64.
pub(crate) const I64: TypeTraits = TypeTraits::geometry(GgmlType::I64, "i64", 1, 8);
/// Registry entry for f64.
pub(crate) const F64: TypeTraits = TypeTraits::geometry(GgmlType::F64, "f64", 1, 8);
