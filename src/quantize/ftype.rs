//! llama.cpp's file types (`llama_ftype`, the `general.file_type` value): one row each in
//! [`LLAMA_FTYPES`], and llama-quantize's list of the ones it offers, [`FILE_TYPES`].
//!
//! Every other place that needs a file type id (the quantization rules, the converters'
//! `--outtype`, the legacy readers) reads it from here: the ids are written once, in the
//! table below.

use ggufkit_quantizers::GgmlType;

/// Which legacy files (GGML, GGMF, GGJT v1–v3) may carry a file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyFiles {
    /// Every version.
    All,
    /// Only the versions before GGJT v2 (those that still had Q4_2 and Q4_3).
    BeforeGgjtV2,
    /// Only GGJT v3 (the k-quants came with it).
    GgjtV3,
}

/// A file type's name in legacy files (the `GGMLFType` / `llama_ftype` spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyName {
    /// The name, e.g. `MOSTLY_Q4_0`.
    pub name: &'static str,
    /// The files that may carry it.
    pub files: LegacyFiles,
}

/// One `llama_ftype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlamaFtype {
    /// The id written to `general.file_type`.
    pub id: u32,
    /// The name llama-quantize prints and accepts (`Q4_K_M`); for the removed ones, the
    /// enum's suffix (`Q4_2`).
    pub name: &'static str,
    /// The type most tensors get (`llama_ftype_get_default_type`); `None` once removed.
    pub default_type: Option<GgmlType>,
    /// The tensor type for which llama.cpp's model loader guesses this file type (when a
    /// file has no `general.file_type`, from its most common tensor type).
    pub guessed_from: Option<GgmlType>,
    /// The converters' `--outtype` value that produces this file type.
    pub outtype: Option<&'static str>,
    /// The name in legacy files, if they could carry it.
    pub legacy: Option<LegacyName>,
}

macro_rules! llama_ftypes {
    ($(
        $ft:ident = $id:literal => $default:ident
            $(guess($guess:ident))?
            $(outtype($outtype:literal))?
            $(legacy($legacy:literal, $files:ident))?;
    )*) => {
        /// The `llama_ftype` ids, named as llama-quantize names the file types.
        pub mod ft {
            $(
                #[doc = concat!("`", stringify!($ft), "`")]
                pub const $ft: u32 = $id;
            )*
        }

        /// Every `llama_ftype`, removed ones included; row `i` has id `i`.
        pub const LLAMA_FTYPES: &[LlamaFtype] = &[$(
            LlamaFtype {
                id: $id,
                name: stringify!($ft),
                default_type: llama_ftypes!(@default $default),
                guessed_from: llama_ftypes!(@type $($guess)?),
                outtype: llama_ftypes!(@opt $($outtype)?),
                legacy: llama_ftypes!(@legacy $($legacy, $files)?),
            },
        )*];
    };
    (@default removed) => { None };
    (@default $t:ident) => { Some(GgmlType::$t) };
    (@type) => { None };
    (@type $t:ident) => { Some(GgmlType::$t) };
    (@opt) => { None };
    (@opt $v:literal) => { Some($v) };
    (@legacy) => { None };
    (@legacy $name:literal, $files:ident) => {
        Some(LegacyName { name: $name, files: LegacyFiles::$files })
    };
}

// The columns: name = id => default type (or `removed`), then where present the tensor type
// the loader guesses it from, the converters' --outtype and the legacy name.
llama_ftypes! {
    F32           = 0  => F32     guess(F32)     outtype("f32")   legacy("ALL_F32", All);
    F16           = 1  => F16     guess(F16)     outtype("f16")   legacy("MOSTLY_F16", All);
    Q4_0          = 2  => Q4_0    guess(Q4_0)    legacy("MOSTLY_Q4_0", All);
    Q4_1          = 3  => Q4_1    guess(Q4_1)    legacy("MOSTLY_Q4_1", All);
    Q4_1_SOME_F16 = 4  => removed legacy("MOSTLY_Q4_1_SOME_F16", All);
    Q4_2          = 5  => removed legacy("MOSTLY_Q4_2", BeforeGgjtV2);
    Q4_3          = 6  => removed legacy("MOSTLY_Q4_3", BeforeGgjtV2);
    Q8_0          = 7  => Q8_0    guess(Q8_0)    outtype("q8_0")  legacy("MOSTLY_Q8_0", All);
    Q5_0          = 8  => Q5_0    guess(Q5_0)    legacy("MOSTLY_Q5_0", All);
    Q5_1          = 9  => Q5_1    guess(Q5_1)    legacy("MOSTLY_Q5_1", All);
    Q2_K          = 10 => Q2_K    guess(Q2_K)    legacy("MOSTLY_Q2_K", GgjtV3);
    Q3_K_S        = 11 => Q3_K    legacy("MOSTLY_Q3_K_S", GgjtV3);
    Q3_K_M        = 12 => Q3_K    guess(Q3_K)    legacy("MOSTLY_Q3_K_M", GgjtV3);
    Q3_K_L        = 13 => Q3_K    legacy("MOSTLY_Q3_K_L", GgjtV3);
    Q4_K_S        = 14 => Q4_K    legacy("MOSTLY_Q4_K_S", GgjtV3);
    Q4_K_M        = 15 => Q4_K    guess(Q4_K)    legacy("MOSTLY_Q4_K_M", GgjtV3);
    Q5_K_S        = 16 => Q5_K    legacy("MOSTLY_Q5_K_S", GgjtV3);
    Q5_K_M        = 17 => Q5_K    guess(Q5_K)    legacy("MOSTLY_Q5_K_M", GgjtV3);
    Q6_K          = 18 => Q6_K    guess(Q6_K)    legacy("MOSTLY_Q6_K", GgjtV3);
    IQ2_XXS       = 19 => IQ2_XXS guess(IQ2_XXS);
    IQ2_XS        = 20 => IQ2_XS  guess(IQ2_XS);
    Q2_K_S        = 21 => Q2_K;
    IQ3_XS        = 22 => IQ3_S;
    IQ3_XXS       = 23 => IQ3_XXS guess(IQ3_XXS);
    IQ1_S         = 24 => IQ1_S   guess(IQ1_S);
    IQ4_NL        = 25 => IQ4_NL  guess(IQ4_NL);
    IQ3_S         = 26 => IQ3_S   guess(IQ3_S);
    IQ3_M         = 27 => IQ3_S;
    IQ2_S         = 28 => IQ2_XS  guess(IQ2_S);
    IQ2_M         = 29 => IQ2_S;
    IQ4_XS        = 30 => IQ4_XS  guess(IQ4_XS);
    IQ1_M         = 31 => IQ1_M   guess(IQ1_M);
    BF16          = 32 => BF16    guess(BF16)    outtype("bf16");
    Q4_0_4_4      = 33 => removed;
    Q4_0_4_8      = 34 => removed;
    Q4_0_8_8      = 35 => removed;
    TQ1_0         = 36 => TQ1_0   guess(TQ1_0)   outtype("tq1_0");
    TQ2_0         = 37 => TQ2_0   guess(TQ2_0)   outtype("tq2_0");
    MXFP4_MOE     = 38 => MXFP4;
    NVFP4         = 39 => NVFP4   guess(NVFP4);
    Q1_0          = 40 => Q1_0    guess(Q1_0);
    Q2_0          = 41 => Q2_0    guess(Q2_0);
}

impl LlamaFtype {
    /// The file type with `id`, removed ones included.
    pub const fn by_id(id: u32) -> Option<&'static LlamaFtype> {
        if (id as usize) < LLAMA_FTYPES.len() {
            Some(&LLAMA_FTYPES[id as usize])
        } else {
            None
        }
    }

    /// The file type a converter `--outtype` value (case-insensitive) produces.
    pub fn by_outtype(outtype: &str) -> Option<&'static LlamaFtype> {
        LLAMA_FTYPES
            .iter()
            .find(|f| f.outtype.is_some_and(|o| o.eq_ignore_ascii_case(outtype)))
    }

    /// The file type llama.cpp's loader guesses for a file whose most common tensor type is
    /// `ty`, if it guesses one for that type.
    pub fn guessed_for(ty: GgmlType) -> Option<&'static LlamaFtype> {
        LLAMA_FTYPES.iter().find(|f| f.guessed_from == Some(ty))
    }

    /// True for the file types llama.cpp has removed.
    pub const fn is_removed(&self) -> bool {
        self.default_type.is_none()
    }
}

/// A `llama_ftype` as llama-quantize offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileType {
    /// The CLI name (`Q4_K_M`), also used in the default output name.
    pub name: &'static str,
    /// The `llama_ftype` id written to `general.file_type`.
    pub id: u32,
    /// The type most tensors get (`llama_ftype_get_default_type`); `None` for COPY.
    pub default_type: Option<GgmlType>,
    /// One line for `--help`.
    pub about: &'static str,
}

/// llama-quantize's entry for file type `id`, under its own name.
const fn offer(id: u32, about: &'static str) -> FileType {
    alias(LLAMA_FTYPES[id as usize].name, id, about)
}

/// llama-quantize's entry `name` for file type `id`.
const fn alias(name: &'static str, id: u32, about: &'static str) -> FileType {
    FileType {
        name,
        id,
        default_type: LLAMA_FTYPES[id as usize].default_type,
        about,
    }
}

/// Every ftype in llama-quantize's table order (numeric ids resolve to the first match).
pub const FILE_TYPES: &[FileType] = &[
    offer(ft::Q1_0, "1.125 bpw, group 128"),
    offer(ft::Q2_0, "2.25 bpw, group 64"),
    offer(ft::Q4_0, "4.5 bpw, legacy"),
    offer(ft::Q4_1, "5.0 bpw, legacy"),
    offer(ft::MXFP4_MOE, "MXFP4 experts, Q8_0 elsewhere"),
    offer(ft::Q5_0, "5.5 bpw, legacy"),
    offer(ft::Q5_1, "6.0 bpw, legacy"),
    offer(ft::IQ2_XXS, "2.06 bpw (needs an imatrix)"),
    offer(ft::IQ2_XS, "2.31 bpw (needs an imatrix)"),
    offer(ft::IQ2_S, "2.5 bpw mix (needs an imatrix)"),
    offer(ft::IQ2_M, "2.7 bpw mix (needs an imatrix)"),
    offer(ft::IQ1_S, "1.56 bpw (needs an imatrix)"),
    offer(ft::IQ1_M, "1.75 bpw (needs an imatrix)"),
    offer(ft::TQ1_0, "1.69 bpw ternary"),
    offer(ft::TQ2_0, "2.06 bpw ternary"),
    offer(ft::Q2_K, "2.96G @ Llama-3-8B, K-quant mix"),
    offer(
        ft::Q2_K_S,
        "2.96G @ Llama-3-8B (needs an imatrix for 256-wide rows)",
    ),
    offer(ft::IQ3_XXS, "3.06 bpw"),
    offer(ft::IQ3_S, "3.44 bpw"),
    offer(ft::IQ3_M, "3.66 bpw mix"),
    alias("Q3_K", ft::Q3_K_M, "alias for Q3_K_M"),
    offer(ft::IQ3_XS, "3.3 bpw mix"),
    offer(ft::Q3_K_S, "3.41G @ Llama-3-8B"),
    offer(ft::Q3_K_M, "3.74G @ Llama-3-8B"),
    offer(ft::Q3_K_L, "4.03G @ Llama-3-8B"),
    offer(ft::IQ4_NL, "4.5 bpw non-linear"),
    offer(ft::IQ4_XS, "4.25 bpw non-linear"),
    alias("Q4_K", ft::Q4_K_M, "alias for Q4_K_M"),
    offer(ft::Q4_K_S, "4.37G @ Llama-3-8B"),
    offer(ft::Q4_K_M, "4.58G @ Llama-3-8B (the usual choice)"),
    alias("Q5_K", ft::Q5_K_M, "alias for Q5_K_M"),
    offer(ft::Q5_K_S, "5.21G @ Llama-3-8B"),
    offer(ft::Q5_K_M, "5.33G @ Llama-3-8B"),
    offer(ft::Q6_K, "6.14G @ Llama-3-8B"),
    offer(ft::Q8_0, "7.96G @ Llama-3-8B, nearly lossless"),
    offer(ft::F16, "14.00G @ Mistral-7B"),
    offer(ft::BF16, "14.00G @ Mistral-7B"),
    offer(ft::F32, "26.00G @ 7B"),
    FileType {
        name: "COPY",
        id: ft::F32,
        default_type: None,
        about: "copy tensors unchanged, only rewrite metadata",
    },
];

impl FileType {
    /// Parses a CLI type: a name (case-insensitive) or a numeric ftype id (first match).
    pub fn parse(s: &str) -> Option<FileType> {
        if let Some(f) = FILE_TYPES.iter().find(|f| f.name.eq_ignore_ascii_case(s)) {
            return Some(*f);
        }
        let id: u32 = s.trim().parse().ok()?;
        FILE_TYPES.iter().find(|f| f.id == id).copied()
    }

    /// True for COPY.
    pub fn is_copy(&self) -> bool {
        self.default_type.is_none()
    }

    /// The ftype with `id` (for the `_S/_M/_L` logic): the canonical (non-alias) entry.
    pub fn by_id(id: u32) -> Option<FileType> {
        FILE_TYPES
            .iter()
            .rev()
            .find(|f| f.id == id && !f.is_copy())
            .copied()
    }

    /// The llama_ftype the model loader guesses for a file whose most common type is `ty`
    /// (unlisted types guess ALL_F32), used for COPY without `general.file_type`.
    pub fn for_tensor_type(ty: GgmlType) -> u32 {
        LlamaFtype::guessed_for(ty).map_or(ft::F32, |f| f.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ggufkit_quantizers::traits;

    #[test]
    fn parse_names_and_ids_like_llama_quantize() {
        assert_eq!(FileType::parse("q4_k_m").unwrap().id, 15);
        assert_eq!(FileType::parse("15").unwrap().name, "Q4_K");
        assert_eq!(FileType::parse("0").unwrap().name, "F32");
        assert!(FileType::parse("COPY").unwrap().is_copy());
        assert_eq!(
            FileType::parse("Q2_K_S").unwrap().default_type,
            Some(GgmlType::Q2_K)
        );
        assert!(FileType::parse("Q9_9").is_none());
        assert!(FileType::parse("999").is_none());
    }

    /// Every id from 0 to the highest has its row, in order, under a unique name.
    #[test]
    fn every_ftype_id_has_one_row() {
        for (i, f) in LLAMA_FTYPES.iter().enumerate() {
            assert_eq!(f.id as usize, i, "{}", f.name);
            assert_eq!(LlamaFtype::by_id(f.id), Some(f));
            let same_name = LLAMA_FTYPES.iter().filter(|g| g.name == f.name).count();
            assert_eq!(same_name, 1, "{}", f.name);
        }
        assert_eq!(LlamaFtype::by_id(LLAMA_FTYPES.len() as u32), None);
    }

    /// llama-quantize's entries agree with the rows: same default type, the row's own name
    /// unless an alias, and every file type that is not removed and that llama-quantize
    /// knows (all but NVFP4) is offered under its name.
    #[test]
    fn the_cli_list_follows_the_rows() {
        for f in FILE_TYPES.iter().filter(|f| !f.is_copy()) {
            let row = LlamaFtype::by_id(f.id).unwrap();
            assert_eq!(f.default_type, row.default_type, "{}", f.name);
            assert!(!row.is_removed(), "{}", f.name);
            if f.name != row.name {
                assert!(f.about.starts_with("alias for "), "{}", f.name);
                assert_eq!(&f.about["alias for ".len()..], row.name);
            }
            assert_eq!(FileType::parse(f.name), Some(*f));
        }
        for row in LLAMA_FTYPES.iter().filter(|r| !r.is_removed()) {
            let offered = FILE_TYPES.iter().any(|f| f.name == row.name);
            assert_eq!(offered, row.id != ft::NVFP4, "{}", row.name);
            assert_eq!(
                FileType::by_id(row.id).map(|f| f.name),
                offered.then_some(row.name)
            );
        }
    }

    /// Default types can be produced; guesses, outtypes and legacy names are unique; each
    /// guess and outtype names a file type whose default type is that type.
    #[test]
    fn columns_are_consistent() {
        for row in LLAMA_FTYPES {
            if let Some(t) = row.default_type {
                assert!(traits(t).quantize.is_some(), "{}", row.name);
            }
            if let Some(t) = row.guessed_from {
                assert_eq!(LlamaFtype::guessed_for(t), Some(row), "{}", row.name);
                assert_eq!(FileType::for_tensor_type(t), row.id);
            }
            if let Some(o) = row.outtype {
                assert_eq!(LlamaFtype::by_outtype(o), Some(row));
                assert_eq!(row.default_type.map(|t| t.name()), Some(o));
                assert_eq!(row.guessed_from, row.default_type);
            }
            if let Some(l) = row.legacy {
                let same = LLAMA_FTYPES
                    .iter()
                    .filter(|r| r.legacy.is_some_and(|m| m.name == l.name));
                assert_eq!(same.count(), 1, "{}", l.name);
                assert!(l.name.ends_with(row.name), "{} vs {}", l.name, row.name);
            }
        }
        assert_eq!(FileType::for_tensor_type(GgmlType::MXFP4), ft::F32);
    }
}
