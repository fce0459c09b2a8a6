//! iq2_s: 256 elements per block, 82 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq2_s.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ2_S, "iq2_s", 256, 82);
