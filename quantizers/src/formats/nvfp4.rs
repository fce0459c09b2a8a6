//! nvfp4: 64 elements per block, 36 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for nvfp4.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::NVFP4, "nvfp4", 64, 36);
