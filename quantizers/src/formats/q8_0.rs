//! q8_0: 32 elements per block, 34 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q8_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q8_0, "q8_0", 32, 34);
