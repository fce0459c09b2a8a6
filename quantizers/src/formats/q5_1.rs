//! q5_1: 32 elements per block, 24 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q5_1.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q5_1, "q5_1", 32, 24);
