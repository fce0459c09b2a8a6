//! q2_K: 256 elements per block, 84 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q2_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q2_K, "q2_K", 256, 84);
