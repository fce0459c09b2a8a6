//! q5_K: 256 elements per block, 176 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q5_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q5_K, "q5_K", 256, 176);
