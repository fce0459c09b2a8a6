//! iq3_s: 256 elements per block, 110 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq3_s.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ3_S, "iq3_s", 256, 110);
