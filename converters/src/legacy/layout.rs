//! Per-tensor type ids and whole-file types (`ftype`) of the legacy formats, and the block
//! layout each type id had in each file version.
//!
//! The block layouts changed twice while the container stayed the same:
//!
//! | generation | files | Q4_0 / Q4_1 | Q5_0 / Q5_1 | Q8_0 |
//! |---|---|---|---|---|
//! | 0 | GGML, GGMF, GGJT v1 | f32 scale(s), pairwise nibbles | pairwise nibbles | f32 scale |
//! | 1 | GGJT v2 (llama.cpp #1405) | f32 scale(s), split nibbles | as today | f32 scale |
//! | 2 | GGJT v3 (llama.cpp #1508) | as today | as today | as today |
//!
//! "Pairwise": byte j holds element 2j (low nibble) and 2j+1 (high nibble). "Split" (today):
//! byte j holds element j (low) and j + 16 (high). Q4_2 and Q4_3 (16-element blocks) only
//! existed in generation 0. The rules are applied per tensor, not from the file's `ftype`.

use std::fmt;

use ggufkit::quantize::ftype::{ft, LegacyFiles, LlamaFtype};
use ggufkit::quantizers::GgmlType;

use super::container::LegacyKind;
use super::error::LegacyErrorKind;

/// How a legacy tensor's bytes are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Exactly a current GGUF type: the bytes are copied.
    Current(GgmlType),
    /// Q4_0 with an f32 scale: `d: f32, qs[16]`, 20 bytes per 32 elements.
    Q4_0F32 {
        /// Split nibble order (GGJT v2) rather than pairwise (before).
        split: bool,
    },
    /// Q4_1 with f32 scale and minimum: `d: f32, m: f32, qs[16]`, 24 bytes per 32 elements.
    Q4_1F32 {
        /// Split nibble order (GGJT v2) rather than pairwise (before).
        split: bool,
    },
    /// Q4_2: `d: f16, qs[8]` pairwise, 10 bytes per 16 elements; x = (q − 8)·d.
    Q4_2,
    /// Q4_3: `d: f16, m: f16, qs[8]` pairwise, 12 bytes per 16 elements; x = q·d + m.
    Q4_3,
    /// Q5_0 before GGJT v2: `d: f16, qh: u32, qs[16]` pairwise, 22 bytes.
    Q5_0Pairwise,
    /// Q5_1 before GGJT v2: `d: f16, m: f16, qh: u32, qs[16]` pairwise, 24 bytes.
    Q5_1Pairwise,
    /// Q8_0 before GGJT v3: `d: f32, qs: [i8; 32]`, 36 bytes.
    Q8_0F32,
}

impl Layout {
    /// Elements per block.
    pub fn block_size(self) -> usize {
        match self {
            Layout::Current(t) => t.block_size(),
            Layout::Q4_2 | Layout::Q4_3 => 16,
            _ => 32,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            Layout::Current(t) => t.type_size(),
            Layout::Q4_0F32 { .. } => 20,
            Layout::Q4_1F32 { .. } => 24,
            Layout::Q4_2 => 10,
            Layout::Q4_3 => 12,
            Layout::Q5_0Pairwise => 22,
            Layout::Q5_1Pairwise => 24,
            Layout::Q8_0F32 => 36,
        }
    }

    /// True when the bytes are not those of any current type.
    pub fn is_changed(self) -> bool {
        !matches!(self, Layout::Current(_))
    }

    /// The current type with the same meaning (and, where an exact repack succeeds,
    /// the same values): the default target of a conversion.
    pub fn closest(self) -> GgmlType {
        match self {
            Layout::Current(t) => t,
            Layout::Q4_0F32 { .. } | Layout::Q4_2 => GgmlType::Q4_0,
            Layout::Q4_1F32 { .. } | Layout::Q4_3 => GgmlType::Q4_1,
            Layout::Q5_0Pairwise => GgmlType::Q5_0,
            Layout::Q5_1Pairwise => GgmlType::Q5_1,
            Layout::Q8_0F32 => GgmlType::Q8_0,
        }
    }

    /// True when the layout can become its [`Layout::closest`] type without touching the
    /// values, at least when every scale fits in f16 (Q4_2/Q4_3 never can: their blocks
    /// are half the size).
    pub fn repackable(self) -> bool {
        !matches!(self, Layout::Current(_) | Layout::Q4_2 | Layout::Q4_3)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let order = |split: bool| if split { "split" } else { "pairwise" };
        match *self {
            Layout::Current(t) => write!(f, "{t}"),
            Layout::Q4_0F32 { split } => {
                write!(f, "old q4_0 (f32 scale, {} nibbles, 20 B/32)", order(split))
            }
            Layout::Q4_1F32 { split } => {
                write!(
                    f,
                    "old q4_1 (f32 scale and min, {} nibbles, 24 B/32)",
                    order(split)
                )
            }
            Layout::Q4_2 => f.write_str("q4_2 (f16 scale, pairwise nibbles, 10 B/16)"),
            Layout::Q4_3 => f.write_str("q4_3 (f16 scale and min, pairwise nibbles, 12 B/16)"),
            Layout::Q5_0Pairwise => f.write_str("old q5_0 (pairwise nibbles, 22 B/32)"),
            Layout::Q5_1Pairwise => f.write_str("old q5_1 (pairwise nibbles, 24 B/32)"),
            Layout::Q8_0F32 => f.write_str("old q8_0 (f32 scale, 36 B/32)"),
        }
    }
}

/// The block-layout generation of a container (table in the module docs).
fn generation(kind: LegacyKind) -> u8 {
    use super::container::LegacyFormat::*;
    match (kind.format, kind.version) {
        (Ggjt, 2) => 1,
        (Ggjt, v) if v >= 3 => 2,
        _ => 0,
    }
}

/// The layout of a tensor of type `id` in a `kind` file, or why it cannot occur there.
pub fn layout_for(kind: LegacyKind, id: u32) -> Result<Layout, LegacyErrorKind> {
    let g = generation(kind);
    let not_in = |id: u32| LegacyErrorKind::TypeNotInFormat {
        id,
        name: GgmlType::from_id(id)
            .map(|t| t.name().to_string())
            .unwrap_or_default(),
        kind,
    };
    Ok(match id {
        0 => Layout::Current(GgmlType::F32),
        1 => Layout::Current(GgmlType::F16),
        2 => match g {
            0 => Layout::Q4_0F32 { split: false },
            1 => Layout::Q4_0F32 { split: true },
            _ => Layout::Current(GgmlType::Q4_0),
        },
        3 => match g {
            0 => Layout::Q4_1F32 { split: false },
            1 => Layout::Q4_1F32 { split: true },
            _ => Layout::Current(GgmlType::Q4_1),
        },
        4 | 5 if g > 0 => {
            return Err(LegacyErrorKind::RemovedType {
                id,
                name: if id == 4 { "q4_2" } else { "q4_3" },
                kind,
            })
        }
        4 => Layout::Q4_2,
        5 => Layout::Q4_3,
        6 if g == 0 => Layout::Q5_0Pairwise,
        6 => Layout::Current(GgmlType::Q5_0),
        7 if g == 0 => Layout::Q5_1Pairwise,
        7 => Layout::Current(GgmlType::Q5_1),
        8 if g < 2 => Layout::Q8_0F32,
        8 => Layout::Current(GgmlType::Q8_0),
        10..=14 if g == 2 => Layout::Current(GgmlType::from_id(id).ok_or_else(|| not_in(id))?),
        _ if GgmlType::from_id(id).is_some() => return Err(not_in(id)),
        _ => return Err(LegacyErrorKind::UnknownType(id)),
    })
}

/// llama.cpp's name of a whole-file type (`llama_ftype` / the converter's `GGMLFType`), if
/// files of `kind` could carry it.
pub fn ftype_name(kind: LegacyKind, ftype: u32) -> Option<&'static str> {
    let legacy = LlamaFtype::by_id(ftype)?.legacy?;
    let carried = match legacy.files {
        LegacyFiles::All => true,
        LegacyFiles::BeforeGgjtV2 => generation(kind) == 0,
        LegacyFiles::GgjtV3 => generation(kind) == 2,
    };
    carried.then_some(legacy.name)
}

/// The `general.file_type` (`llama_ftype`) of a model whose quantized tensors are all `ty`,
/// for the types that have a "pure" file type.
pub fn ftype_of(ty: GgmlType) -> Option<u32> {
    Some(match ty {
        GgmlType::F32 => ft::F32,
        GgmlType::F16 => ft::F16,
        GgmlType::Q4_0 => ft::Q4_0,
        GgmlType::Q4_1 => ft::Q4_1,
        GgmlType::Q8_0 => ft::Q8_0,
        GgmlType::Q5_0 => ft::Q5_0,
        GgmlType::Q5_1 => ft::Q5_1,
        GgmlType::Q2_K => ft::Q2_K,
        GgmlType::Q3_K => ft::Q3_K_S,
        GgmlType::Q4_K => ft::Q4_K_S,
        GgmlType::Q5_K => ft::Q5_K_S,
        GgmlType::Q6_K => ft::Q6_K,
        GgmlType::BF16 => ft::BF16,
        _ => return None,
    })
}

/// The legacy tensor type id (the old numbering, see [`layout_for`]) an `ftype` promises for
/// 2-D tensors (None for k-quant mixtures).
pub fn ftype_main_type(ftype: u32) -> Option<u32> {
    Some(match ftype {
        ft::F32 => 0,
        ft::F16 => 1,
        ft::Q4_0 => 2,
        ft::Q4_1 | ft::Q4_1_SOME_F16 => 3,
        ft::Q4_2 => 4,
        ft::Q4_3 => 5,
        ft::Q8_0 => 8,
        ft::Q5_0 => 6,
        ft::Q5_1 => 7,
        _ => return None,
    })
}

/// The current type whose pure file type a legacy `ftype` still is (None for the removed
/// Q4_2/Q4_3 file types and the k-quant mixtures).
pub fn ftype_current_type(ftype: u32) -> Option<GgmlType> {
    Some(match ftype {
        ft::F32 => GgmlType::F32,
        ft::F16 => GgmlType::F16,
        ft::Q4_0 => GgmlType::Q4_0,
        ft::Q4_1 | ft::Q4_1_SOME_F16 => GgmlType::Q4_1,
        ft::Q8_0 => GgmlType::Q8_0,
        ft::Q5_0 => GgmlType::Q5_0,
        ft::Q5_1 => GgmlType::Q5_1,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::container::LegacyFormat;
    use super::*;

    fn kind(format: LegacyFormat, version: u32) -> LegacyKind {
        LegacyKind { format, version }
    }

    #[test]
    fn block_geometry_matches_the_old_structs() {
        for (l, bs, bytes) in [
            (Layout::Q4_0F32 { split: false }, 32, 4 + 16),
            (Layout::Q4_1F32 { split: true }, 32, 4 + 4 + 16),
            (Layout::Q4_2, 16, 2 + 8),
            (Layout::Q4_3, 16, 2 + 2 + 8),
            (Layout::Q5_0Pairwise, 32, 2 + 4 + 16),
            (Layout::Q5_1Pairwise, 32, 2 + 2 + 4 + 16),
            (Layout::Q8_0F32, 32, 4 + 32),
        ] {
            assert_eq!((l.block_size(), l.block_bytes()), (bs, bytes), "{l}");
        }
    }

    #[test]
    fn layouts_follow_the_generations() {
        let v1 = kind(LegacyFormat::Ggjt, 1);
        let v2 = kind(LegacyFormat::Ggjt, 2);
        let v3 = kind(LegacyFormat::Ggjt, 3);
        let ggml = kind(LegacyFormat::Ggml, 1);
        assert_eq!(layout_for(ggml, 2), Ok(Layout::Q4_0F32 { split: false }));
        assert_eq!(layout_for(v2, 2), Ok(Layout::Q4_0F32 { split: true }));
        assert_eq!(layout_for(v3, 2), Ok(Layout::Current(GgmlType::Q4_0)));
        assert_eq!(layout_for(v1, 6), Ok(Layout::Q5_0Pairwise));
        assert_eq!(layout_for(v2, 7), Ok(Layout::Current(GgmlType::Q5_1)));
        assert_eq!(layout_for(v2, 8), Ok(Layout::Q8_0F32));
        assert_eq!(layout_for(v3, 12), Ok(Layout::Current(GgmlType::Q4_K)));
        assert_eq!(layout_for(v1, 4), Ok(Layout::Q4_2));
        assert!(matches!(
            layout_for(v3, 4),
            Err(LegacyErrorKind::RemovedType { id: 4, .. })
        ));
        assert!(matches!(
            layout_for(v2, 5),
            Err(LegacyErrorKind::RemovedType { id: 5, .. })
        ));
        assert!(matches!(
            layout_for(v2, 12),
            Err(LegacyErrorKind::TypeNotInFormat { id: 12, .. })
        ));
        assert!(matches!(
            layout_for(v3, 9),
            Err(LegacyErrorKind::TypeNotInFormat { id: 9, .. })
        ));
        assert!(matches!(
            layout_for(v3, 15),
            Err(LegacyErrorKind::TypeNotInFormat { id: 15, .. })
        ));
        assert!(matches!(
            layout_for(v3, 30),
            Err(LegacyErrorKind::TypeNotInFormat { id: 30, .. })
        ));
        assert_eq!(layout_for(v3, 31), Err(LegacyErrorKind::UnknownType(31)));
        assert_eq!(
            layout_for(v3, u32::MAX),
            Err(LegacyErrorKind::UnknownType(u32::MAX))
        );
    }

    #[test]
    fn ftypes_follow_the_generations() {
        let v1 = kind(LegacyFormat::Ggjt, 1);
        let v3 = kind(LegacyFormat::Ggjt, 3);
        assert_eq!(ftype_name(v3, 2), Some("MOSTLY_Q4_0"));
        assert_eq!(ftype_name(v1, 5), Some("MOSTLY_Q4_2"));
        assert_eq!(ftype_name(v3, 5), None);
        assert_eq!(ftype_name(v1, 15), None);
        assert_eq!(ftype_name(v3, 15), Some("MOSTLY_Q4_K_M"));
        assert_eq!(ftype_name(v3, 19), None);
        let v2 = kind(LegacyFormat::Ggjt, 2);
        let ggml = kind(LegacyFormat::Ggml, 1);
        assert_eq!(ftype_name(ggml, 0), Some("ALL_F32"));
        assert_eq!(ftype_name(v2, 4), Some("MOSTLY_Q4_1_SOME_F16"));
        assert_eq!(ftype_name(v2, 6), None);
        assert_eq!(ftype_name(ggml, 6), Some("MOSTLY_Q4_3"));
        assert_eq!(ftype_name(v2, 18), None);
        assert_eq!(ftype_name(v3, 18), Some("MOSTLY_Q6_K"));
        assert_eq!(ftype_name(v3, 9), Some("MOSTLY_Q5_1"));
        assert_eq!(ftype_name(v3, u32::MAX), None);
    }
}
