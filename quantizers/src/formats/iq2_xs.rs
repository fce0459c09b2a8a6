//! iq2_xs: 256 elements per block, 74 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq2_xs.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ2_XS, "iq2_xs", 256, 74);
