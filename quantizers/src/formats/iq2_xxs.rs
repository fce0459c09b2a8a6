//! iq2_xxs: 256 elements per block, 66 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq2_xxs.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ2_XXS, "iq2_xxs", 256, 66);
