//! q6_K: 256 elements per block, 210 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q6_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q6_K, "q6_K", 256, 210);
