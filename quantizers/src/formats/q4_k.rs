//! q4_K: 256 elements per block, 144 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q4_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q4_K, "q4_K", 256, 144);
