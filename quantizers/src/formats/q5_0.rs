//! q5_0: 32 elements per block, 22 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q5_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q5_0, "q5_0", 32, 22);
