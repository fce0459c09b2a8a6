//! gguf-edit: metadata edits (in place and as a copy), split and merge.

mod edit_cli;
mod edit_golden;
mod edit_inplace;
mod split_golden;
