//! Recipes: a quantized file's per-tensor layout, written as a base file type plus the
//! `--tensor-type` items that make llama-quantize's rules produce exactly that layout.
//!
//! [`Recipe::of_model`] reads a layout out of a quantized model: it replays the planner's
//! typing phase for the file's own base type (`general.file_type`) and, for every tensor whose
//! type differs from the rules' choice, emits an override anchored to that one tensor name
//! (`^blk\.0\.attn_v\.weight$=q8_0`). An override stops the mixture rules from seeing its
//! tensor (llama-quantize counts only the tensors it types by rule), so the replay does the
//! same: a tensor that gets an override leaves the rules' counters as they were. Quantizing
//! the source with the base type and these items then gives every tensor its type again.
//!
//! The text form is llama-quantize's `--tensor-type-file` (whitespace-separated
//! `PATTERN=TYPE` items) preceded by `#` comment lines, two of which this module reads:
//! `# base: Q4_K_M` (the file type) and `# imatrix: yes|no` (whether the layout was made with
//! an importance matrix, which some rules look at). llama-quantize does not read comments:
//! [`Recipe::items_text`] is the same recipe without them.

use std::path::{Path, PathBuf};

use super::tensor_types::{TensorTypeError, TensorTypeList};
use super::{load_facts, visiting_order, FileType, QuantizeError, QuantizeOptions, Typing};
use crate::gguf::keys;
use crate::ir::Model;
use crate::quantizers::GgmlType;

/// Largest recipe file read, in bytes (a per-tensor recipe of the largest models is a few
/// hundred kilobytes).
pub const MAX_RECIPE_BYTES: u64 = 16 << 20;

/// One `PATTERN=TYPE` item of a recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeItem {
    /// The pattern (a regex searched in tensor names, as llama-quantize reads it).
    pub pattern: String,
    /// The type the tensors it matches get.
    pub ty: GgmlType,
    /// The one tensor the pattern names, when the recipe was read from a file's layout.
    pub tensor: Option<String>,
}

impl RecipeItem {
    /// The item as llama-quantize reads it.
    pub fn to_item(&self) -> String {
        format!("{}={}", self.pattern, self.ty.name())
    }
}

/// A base file type and the overrides that turn its rules' layout into the wanted one.
#[derive(Debug, Clone)]
pub struct Recipe {
    /// The llama-quantize file type the rules run for.
    pub base: FileType,
    /// The layout was made with an importance matrix (the rules of some types depend on it).
    pub imatrix: bool,
    /// The overrides, first match wins.
    pub items: Vec<RecipeItem>,
}

/// Why a recipe cannot be made or read.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// The model has no `general.file_type`.
    #[error("no {} key: the base file type is unknown", keys::general::FILE_TYPE)]
    NoFileType,
    /// `general.file_type` names no file type llama-quantize writes.
    #[error(
        "{} {id} is not a file type llama-quantize writes",
        keys::general::FILE_TYPE
    )]
    UnknownFileType {
        /// The value.
        id: u32,
    },
    /// The base type's rules ignore overrides (its default type is not quantized), yet a
    /// tensor has another type than they give.
    #[error(
        "tensor '{tensor}' is {ty} but file type {base} gives every tensor its default type: \
         no recipe can express this layout"
    )]
    NotExpressible {
        /// The tensor.
        tensor: String,
        /// Its type.
        ty: GgmlType,
        /// The base file type's name.
        base: &'static str,
    },
    /// The rules cannot run on the model.
    #[error(transparent)]
    Rules(#[from] QuantizeError),
    /// A recipe file cannot be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A recipe file is larger than [`MAX_RECIPE_BYTES`].
    #[error("{}: {size} bytes is larger than a recipe may be ({MAX_RECIPE_BYTES})", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A line of a recipe is wrong.
    #[error("{file}: line {line}: {problem}")]
    Line {
        /// The file.
        file: String,
        /// The line number (from 1).
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// A recipe has no `# base:` line.
    #[error("{file}: no '# base: TYPE' line")]
    NoBase {
        /// The file.
        file: String,
    },
    /// The recipe's items are refused as `--tensor-type` items.
    #[error(transparent)]
    Items(#[from] TensorTypeError),
}

/// The pattern that matches exactly `name` (anchored, metacharacters escaped). llama-quantize
/// lower-cases patterns, so an upper-case letter is matched by `.`.
pub fn exact_pattern(name: &str) -> String {
    let escaped = regex::escape(name);
    let body: String = escaped
        .chars()
        .map(|c| if c.is_uppercase() { '.' } else { c })
        .collect();
    format!("^{body}$")
}

impl Recipe {
    /// The recipe of a quantized model: its `general.file_type` and, for each tensor whose
    /// type differs from what llama-quantize's rules give for that file type, an override
    /// naming that tensor alone.
    pub fn of_model(model: &Model) -> Result<Recipe, RecipeError> {
        let md = &model.metadata;
        let id = md
            .get_u32(keys::general::FILE_TYPE)
            .map_err(|_| RecipeError::NoFileType)?;
        // The loader's "guessed" flag: a COPY of a file without a file type.
        let base = if id & 1024 != 0 {
            FileType::parse("COPY").expect("COPY is a file type")
        } else {
            FileType::by_id(id).ok_or(RecipeError::UnknownFileType { id })?
        };
        let imatrix = md.contains(keys::quantize::IMATRIX_ENTRIES_COUNT);
        let opts = QuantizeOptions::new(base);
        let facts = load_facts(md)?;
        let (order, _) = visiting_order(model, &opts)?;
        let names = order.iter().map(|(_, n)| n.as_str());
        let mut typing = Typing::new(&opts, &facts, imatrix, names);
        let mut items = Vec::new();
        let overridable = base.default_type.is_some_and(|t| t.is_quantized());
        for (info, name) in &order {
            let before = typing.state.clone();
            let choice = typing.choose(info, name)?;
            if choice.to == info.ty {
                continue;
            }
            if !overridable {
                return Err(RecipeError::NotExpressible {
                    tensor: name.clone(),
                    ty: info.ty,
                    base: base.name,
                });
            }
            // Typed by an override, the tensor is not counted by the rules.
            typing.state = before;
            items.push(RecipeItem {
                pattern: exact_pattern(name),
                ty: info.ty,
                tensor: Some(name.clone()),
            });
        }
        Ok(Recipe {
            base,
            imatrix,
            items,
        })
    }

    /// The recipe as text: the comment lines, then one item a line.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "# ggufkit quantization recipe: gguf-quantize --recipe THIS_FILE IN OUT\n\
             # base: {}\n# imatrix: {}\n",
            self.base.name,
            if self.imatrix { "yes" } else { "no" }
        );
        s.push_str(&self.items_text());
        s
    }

    /// The items alone, one a line: a `--tensor-type-file` llama-quantize reads.
    pub fn items_text(&self) -> String {
        self.items
            .iter()
            .map(|i| i.to_item() + "\n")
            .collect::<String>()
    }

    /// Parses a recipe's text (`file` names it in errors).
    pub fn parse(text: &str, file: &str) -> Result<Recipe, RecipeError> {
        let mut base = None;
        let mut imatrix = false;
        let mut items = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let bad = |problem: String| RecipeError::Line {
                file: file.to_string(),
                line: i + 1,
                problem,
            };
            let line = line.trim();
            if let Some(comment) = line.strip_prefix('#') {
                if let Some((k, v)) = comment.split_once(':') {
                    match (k.trim(), v.trim()) {
                        ("base", v) => {
                            base = Some(
                                FileType::parse(v)
                                    .ok_or_else(|| bad(format!("unknown base file type '{v}'")))?,
                            )
                        }
                        ("imatrix", "yes") => imatrix = true,
                        ("imatrix", "no") => imatrix = false,
                        ("imatrix", v) => {
                            return Err(bad(format!("imatrix is 'yes' or 'no', not '{v}'")))
                        }
                        _ => {}
                    }
                }
                continue;
            }
            for item in line.split_ascii_whitespace() {
                let (pattern, ty) = item
                    .split_once('=')
                    .filter(|(p, _)| !p.is_empty())
                    .ok_or_else(|| bad(format!("'{item}' is not PATTERN=TYPE")))?;
                let ty = GgmlType::from_name(ty)
                    .ok_or_else(|| bad(format!("invalid ggml type '{ty}' in '{item}'")))?;
                if items.len() >= super::MAX_TENSOR_TYPE_PATTERNS {
                    return Err(bad(format!(
                        "more than {} items",
                        super::MAX_TENSOR_TYPE_PATTERNS
                    )));
                }
                items.push(RecipeItem {
                    pattern: pattern.to_string(),
                    ty,
                    tensor: None,
                });
            }
        }
        let base = base.ok_or_else(|| RecipeError::NoBase {
            file: file.to_string(),
        })?;
        Ok(Recipe {
            base,
            imatrix,
            items,
        })
    }

    /// Reads a recipe file.
    pub fn load(path: &Path) -> Result<Recipe, RecipeError> {
        let read = |source| RecipeError::Read {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(read)?.len();
        if size > MAX_RECIPE_BYTES {
            return Err(RecipeError::TooLarge {
                path: path.to_path_buf(),
                size,
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        Recipe::parse(&text, &path.display().to_string())
    }

    /// Adds the recipe's items to `list` after what it holds (so an explicit `--tensor-type`
    /// given before still wins); `origin` names the recipe in errors.
    pub fn extend(&self, list: &mut TensorTypeList, origin: &str) -> Result<(), RecipeError> {
        for (n, item) in self.items.iter().enumerate() {
            list.push(&item.to_item(), &format!("{origin}: item {}", n + 1))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_patterns_match_one_name() {
        let p = exact_pattern("blk.1.attn_v.weight");
        assert_eq!(p, r"^blk\.1\.attn_v\.weight$");
        let re = regex::Regex::new(&p).unwrap();
        assert!(re.is_match("blk.1.attn_v.weight"));
        assert!(!re.is_match("blk.11.attn_v.weight"));
        assert!(!re.is_match("xblk.1.attn_v.weight"));
        assert_eq!(exact_pattern("a.B"), r"^a\..$");
    }

    #[test]
    fn text_round_trips() {
        let r = Recipe {
            base: FileType::parse("Q4_K_M").unwrap(),
            imatrix: true,
            items: vec![RecipeItem {
                pattern: exact_pattern("output.weight"),
                ty: GgmlType::Q8_0,
                tensor: Some("output.weight".into()),
            }],
        };
        let text = r.to_text();
        assert!(
            text.ends_with("# imatrix: yes\n^output\\.weight$=q8_0\n"),
            "{text}"
        );
        let back = Recipe::parse(&text, "r").unwrap();
        assert_eq!(back.base.name, "Q4_K_M");
        assert!(back.imatrix);
        assert_eq!(back.items[0].to_item(), r.items[0].to_item());
        assert_eq!(r.items_text(), "^output\\.weight$=q8_0\n");
    }

    #[test]
    fn bad_recipes_name_the_line() {
        let e = Recipe::parse("# base: Q4_K_M\nffn=q9\n", "r.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "r.txt: line 2: invalid ggml type 'q9' in 'ffn=q9'"
        );
        let e = Recipe::parse("ffn=q8_0\n", "r.txt").unwrap_err();
        assert_eq!(e.to_string(), "r.txt: no '# base: TYPE' line");
        let e = Recipe::parse("# base: Q9\n", "r.txt").unwrap_err();
        assert_eq!(e.to_string(), "r.txt: line 1: unknown base file type 'Q9'");
        let e = Recipe::parse("# base: Q4_0\n=q8_0\n", "r.txt").unwrap_err();
        assert_eq!(e.to_string(), "r.txt: line 2: '=q8_0' is not PATTERN=TYPE");
    }
}
