//! q8_K: 256 elements per block, 292 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q8_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q8_K, "q8_K", 256, 292);
