//! q4_0: 32 elements per block, 18 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q4_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q4_0, "q4_0", 32, 18);
