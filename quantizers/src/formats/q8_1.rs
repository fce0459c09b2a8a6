//! q8_1: 32 elements per block, 36 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q8_1.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q8_1, "q8_1", 32, 36);
