//! q1_0: 128 elements per block, 18 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q1_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q1_0, "q1_0", 128, 18);
