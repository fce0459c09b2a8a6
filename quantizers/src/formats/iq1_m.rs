//! iq1_m: 256 elements per block, 56 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq1_m.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ1_M, "iq1_m", 256, 56);
