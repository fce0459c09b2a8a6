//! q4_1: 32 elements per block, 20 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q4_1.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q4_1, "q4_1", 32, 20);
