//! The repository's own promises: testdata's storage and size budget, docs/architectures.md's table of
//! architectures equal to the converter's list, and shared HF code that names no family.

mod fixture_storage;
mod readme_architectures;
mod reference_classes;
mod shared_code_names_no_family;
