//! mxfp4: 32 elements per block, 17 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for mxfp4.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::MXFP4, "mxfp4", 32, 17);
