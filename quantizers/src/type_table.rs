//! The `ggml_types!` macro: from one row per GGML type it generates [`crate::GgmlType`], its
//! id/name/geometry accessors, the list of every type and the registry of kernels. The rows
//! themselves are in `registry.rs`.
//!
//! A row reads
//!
//! ```text
//! Q4_0 = 2, "q4_0", quant, block 32, bytes 18, imatrix uses, kernels Total(q4_0);
//! ```
//!
//! - the variant and its GGUF id, then ggml's name (`ggml_type_name`);
//! - the class: `float`, `int` or `quant` (block-quantized);
//! - elements and bytes per block;
//! - the imatrix: `ignored`, `uses` (read when given) or `requires` (refused without);
//! - the kernels: `Total(module)` or `Partial(module)` (a quantizer that may refuse a row),
//!   where `formats::module` has `quantize_row`, `dequantize_row`, `QK` and `BLOCK_BYTES`
//!   (checked against the row at compile time), or `none` for a type stored but never
//!   converted.
//!
//! The rows follow `removed { NAME = id, … }`: the ids ggml once gave to types it dropped.

/// Expands the type rows (see the module documentation).
macro_rules! ggml_types {
    (
        removed { $( $removed:ident = $removed_id:literal ),* $(,)? }
        $(
            $(#[$doc:meta])*
            $v:ident = $id:literal, $name:literal, $class:ident,
            block $bs:literal, bytes $ts:literal,
            imatrix $imatrix:ident, kernels $kind:ident $(($m:ident))?;
        )*
    ) => {
        /// A GGML tensor element type. The discriminant is the id stored in GGUF tensor infos.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum GgmlType {
            $(
                #[doc = concat!("`", $name, "`")]
                $(#[$doc])*
                $v = $id,
            )*
        }

        /// The position of each type in the table.
        #[allow(non_camel_case_types)]
        #[repr(usize)]
        enum Row {
            $( $v, )*
        }

        /// How many types there are.
        const COUNT: usize = [$( Row::$v ),*].len();

        impl GgmlType {
            /// Every type, in table (= id) order.
            pub const ALL: [GgmlType; COUNT] = [$( GgmlType::$v ),*];

            /// Ids ggml once used for types it has since removed, with their old names.
            pub const REMOVED: &'static [(u32, &'static str)] =
                &[$( ($removed_id, stringify!($removed)) ),*];

            /// The type with GGUF id `id`, if it is one ggml still knows.
            pub const fn from_id(id: u32) -> Option<GgmlType> {
                match id {
                    $( $id => Some(GgmlType::$v), )*
                    _ => None,
                }
            }

            /// The GGUF/ggml id.
            pub const fn id(self) -> u32 {
                self as u32
            }

            /// ggml's name for the type (`ggml_type_name`), e.g. `q4_K`, `bf16`.
            pub const fn name(self) -> &'static str {
                match self {
                    $( GgmlType::$v => $name, )*
                }
            }

            /// Elements per block.
            pub const fn block_size(self) -> usize {
                match self {
                    $( GgmlType::$v => $bs, )*
                }
            }

            /// Bytes per block.
            pub const fn type_size(self) -> usize {
                match self {
                    $( GgmlType::$v => $ts, )*
                }
            }

            /// True for the plain float types (F32, F16, BF16, F64).
            pub const fn is_float(self) -> bool {
                match self {
                    $( GgmlType::$v => ggml_types!(@is float $class), )*
                }
            }

            /// True for block-quantized types (everything but the float and integer types).
            pub const fn is_quantized(self) -> bool {
                match self {
                    $( GgmlType::$v => ggml_types!(@is quant $class), )*
                }
            }

            /// The type's row in [`TABLE`].
            const fn row(self) -> usize {
                match self {
                    $( GgmlType::$v => Row::$v as usize, )*
                }
            }
        }

        /// Every type's traits, in id order.
        static TABLE: [TypeTraits; COUNT] = [
            $(
                TypeTraits {
                    ty: GgmlType::$v,
                    name: $name,
                    block_size: $bs,
                    type_size: $ts,
                    requires_imatrix: ggml_types!(@requires $imatrix),
                    uses_imatrix: ggml_types!(@uses $imatrix),
                    quantize: ggml_types!(@quantize $kind $($m)?),
                    dequantize: ggml_types!(@dequantize $kind $($m)?),
                },
            )*
        ];

        $( ggml_types!(@geometry $v, $bs, $ts, $kind $($m)?); )*
    };

    (@is float float) => { true };
    (@is quant quant) => { true };
    (@is $want:ident $class:ident) => { false };

    (@requires requires) => { true };
    (@requires uses) => { false };
    (@requires ignored) => { false };
    (@uses requires) => { true };
    (@uses uses) => { true };
    (@uses ignored) => { false };

    (@quantize none) => { None };
    (@quantize Total $m:ident) => {
        Some(Quantizer::Total(formats::$m::quantize_row))
    };
    (@quantize Partial $m:ident) => {
        Some(Quantizer::Partial(formats::$m::quantize_row))
    };
    (@dequantize none) => { None };
    (@dequantize $kind:ident $m:ident) => { Some(formats::$m::dequantize_row) };

    (@geometry $v:ident, $bs:literal, $ts:literal, none) => {};
    (@geometry $v:ident, $bs:literal, $ts:literal, $kind:ident $m:ident) => {
        const _: () = assert!(
            formats::$m::QK == $bs && formats::$m::BLOCK_BYTES == $ts,
            concat!("the ", stringify!($v), " row disagrees with formats::", stringify!($m))
        );
    };
}
