//! tq2_0: 256 elements per block, 66 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for tq2_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::TQ2_0, "tq2_0", 256, 66);
