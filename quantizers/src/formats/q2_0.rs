//! q2_0: 64 elements per block, 18 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for q2_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::Q2_0, "q2_0", 64, 18);
