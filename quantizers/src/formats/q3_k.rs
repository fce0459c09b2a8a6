//! q3_K: 256 elements per block, 110 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q3_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q3_K, "q3_K", 256, 110);
