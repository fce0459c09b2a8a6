//! iq3_xxs: 256 elements per block, 98 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for iq3_xxs.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::IQ3_XXS, "iq3_xxs", 256, 98);
