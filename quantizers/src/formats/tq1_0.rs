//! tq1_0: 256 elements per block, 54 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for tq1_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::TQ1_0, "tq1_0", 256, 54);
