//! iq1_s: 256 elements per block, 50 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq1_s.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ1_S, "iq1_s", 256, 50);
