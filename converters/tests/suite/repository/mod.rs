//! The repository's own promises: testdata's storage and size budget, and README's
//! table of architectures equal to the converter's list.

mod fixture_storage;
mod readme_architectures;
mod reference_classes;
