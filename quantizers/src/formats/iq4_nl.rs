//! iq4_nl: 32 elements per block, 18 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq4_nl.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ4_NL, "iq4_nl", 32, 18);
