//! The check every reader makes before its model is written: hyperparameters that
//! contradict the tensors (as llama.cpp's loader sees them, [`ggufkit::inspect::shapes`])
//! never produce a file.

use std::path::Path;

use ggufkit::gguf::Metadata;
use ggufkit::ir::Tensor;

use crate::ConvertError;

/// Refuses a model whose hyperparameters (from `config`) contradict its tensors: llama.cpp's
/// loader would stop at the file when it creates the tensors.
pub(crate) fn check_loadable(
    config: &Path,
    md: &Metadata,
    tensors: &[Tensor],
) -> Result<(), ConvertError> {
    let problems = ggufkit::inspect::shapes::shape_problems(
        md,
        tensors.iter().map(|t| (t.name.as_str(), t.dims.as_slice())),
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ConvertError::HparamsContradictTensors {
            config: config.to_path_buf(),
            problems,
        })
    }
}
