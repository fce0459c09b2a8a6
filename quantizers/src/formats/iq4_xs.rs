//! iq4_xs: 256 elements per block, 136 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq4_xs.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ4_XS, "iq4_xs", 256, 136);
