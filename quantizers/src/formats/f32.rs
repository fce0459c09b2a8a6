//! f32: 1 elements per block, 4 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for f32.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::F32, "f32", 1, 4);
