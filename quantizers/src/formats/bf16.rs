//! bf16: 1 elements per block, 2 bytes per block.

use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Registry entry for bf16.
pub(crate) const TRAITS: TypeTraits = TypeTraits::geometry(GgmlType::BF16, "bf16", 1, 2);
