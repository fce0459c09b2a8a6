//! llama-quantize's file types (`llama_ftype`): CLI names, ids and default tensor types.

use ggufkit_quantizers::GgmlType;

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

macro_rules! ftypes {
    ($( $name:literal, $id:literal, $ty:expr, $about:literal; )*) => {
        /// Every ftype in llama-quantize's table order (numeric ids resolve to the first match).
        pub const FILE_TYPES: &[FileType] = &[
            $( FileType { name: $name, id: $id, default_type: $ty, about: $about }, )*
        ];
    };
}

use GgmlType as T;
ftypes! {
    "Q1_0",      40, Some(T::Q1_0),    "1.125 bpw, group 128";
    "Q2_0",      41, Some(T::Q2_0),    "2.25 bpw, group 64";
    "Q4_0",       2, Some(T::Q4_0),    "4.5 bpw, legacy";
    "Q4_1",       3, Some(T::Q4_1),    "5.0 bpw, legacy";
    "MXFP4_MOE", 38, Some(T::MXFP4),   "MXFP4 experts, Q8_0 elsewhere";
    "Q5_0",       8, Some(T::Q5_0),    "5.5 bpw, legacy";
    "Q5_1",       9, Some(T::Q5_1),    "6.0 bpw, legacy";
    "IQ2_XXS",   19, Some(T::IQ2_XXS), "2.06 bpw (needs an imatrix)";
    "IQ2_XS",    20, Some(T::IQ2_XS),  "2.31 bpw (needs an imatrix)";
    "IQ2_S",     28, Some(T::IQ2_XS),  "2.5 bpw mix (needs an imatrix)";
    "IQ2_M",     29, Some(T::IQ2_S),   "2.7 bpw mix (needs an imatrix)";
    "IQ1_S",     24, Some(T::IQ1_S),   "1.56 bpw (needs an imatrix)";
    "IQ1_M",     31, Some(T::IQ1_M),   "1.75 bpw (needs an imatrix)";
    "TQ1_0",     36, Some(T::TQ1_0),   "1.69 bpw ternary";
    "TQ2_0",     37, Some(T::TQ2_0),   "2.06 bpw ternary";
    "Q2_K",      10, Some(T::Q2_K),    "2.96G @ Llama-3-8B, K-quant mix";
    "Q2_K_S",    21, Some(T::Q2_K),    "2.96G @ Llama-3-8B (needs an imatrix for 256-wide rows)";
    "IQ3_XXS",   23, Some(T::IQ3_XXS), "3.06 bpw";
    "IQ3_S",     26, Some(T::IQ3_S),   "3.44 bpw";
    "IQ3_M",     27, Some(T::IQ3_S),   "3.66 bpw mix";
    "Q3_K",      12, Some(T::Q3_K),    "alias for Q3_K_M";
    "IQ3_XS",    22, Some(T::IQ3_S),   "3.3 bpw mix";
    "Q3_K_S",    11, Some(T::Q3_K),    "3.41G @ Llama-3-8B";
    "Q3_K_M",    12, Some(T::Q3_K),    "3.74G @ Llama-3-8B";
    "Q3_K_L",    13, Some(T::Q3_K),    "4.03G @ Llama-3-8B";
    "IQ4_NL",    25, Some(T::IQ4_NL),  "4.5 bpw non-linear";
    "IQ4_XS",    30, Some(T::IQ4_XS),  "4.25 bpw non-linear";
    "Q4_K",      15, Some(T::Q4_K),    "alias for Q4_K_M";
    "Q4_K_S",    14, Some(T::Q4_K),    "4.37G @ Llama-3-8B";
    "Q4_K_M",    15, Some(T::Q4_K),    "4.58G @ Llama-3-8B (the usual choice)";
    "Q5_K",      17, Some(T::Q5_K),    "alias for Q5_K_M";
    "Q5_K_S",    16, Some(T::Q5_K),    "5.21G @ Llama-3-8B";
    "Q5_K_M",    17, Some(T::Q5_K),    "5.33G @ Llama-3-8B";
    "Q6_K",      18, Some(T::Q6_K),    "6.14G @ Llama-3-8B";
    "Q8_0",       7, Some(T::Q8_0),    "7.96G @ Llama-3-8B, nearly lossless";
    "F16",        1, Some(T::F16),     "14.00G @ Mistral-7B";
    "BF16",      32, Some(T::BF16),    "14.00G @ Mistral-7B";
    "F32",        0, Some(T::F32),     "26.00G @ 7B";
    "COPY",       0, None,             "copy tensors unchanged, only rewrite metadata";
}

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
        match ty {
            T::F32 => 0,
            T::F16 => 1,
            T::BF16 => 32,
            T::Q4_0 => 2,
            T::Q4_1 => 3,
            T::Q5_0 => 8,
            T::Q5_1 => 9,
            T::Q8_0 => 7,
            T::Q2_K => 10,
            T::Q3_K => 12,
            T::Q4_K => 15,
            T::Q5_K => 17,
            T::Q6_K => 18,
            T::TQ1_0 => 36,
            T::TQ2_0 => 37,
            T::IQ2_XXS => 19,
            T::IQ2_XS => 20,
            T::IQ2_S => 28,
            T::IQ3_XXS => 23,
            T::IQ1_S => 24,
            T::IQ1_M => 31,
            T::IQ4_NL => 25,
            T::IQ4_XS => 30,
            T::IQ3_S => 26,
            T::NVFP4 => 39,
            T::Q1_0 => 40,
            T::Q2_0 => 41,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
