//! PyTorch checkpoints (`pytorch_model.bin`, `pytorch_model-0000N-of-0000M.bin`) read in
//! place, without running the pickle in them.
//!
//! `torch.save` (since 1.6) writes a ZIP archive: `<archive>/data.pkl`, a pickle of the state
//! dict whose tensors refer to storages by key, and one stored (uncompressed) member
//! `<archive>/data/<key>` per storage. The readers here are [`zip`] (the container, over the
//! mapped file), [`pickle`] (a restricted unpickler with an allow-list of globals, which
//! never imports or calls anything) and [`checkpoint`] (storages → byte ranges of the file).
//! The result is the same tensor table a safetensors file gives
//! ([`crate::hf::safetensors::StTensor`]): lazy, each tensor a checked range of the mapped
//! file, so the HF converter treats both alike. Legacy (pre-1.6, non-zip) checkpoints are
//! refused with [`TorchErrorKind::Legacy`].
//!
//! As in `convert_hf_to_gguf.py`, `.bin` parts are read only when the directory has no
//! safetensors weights (no `model*.safetensors`, no `model.safetensors.index.json`); their
//! index is `pytorch_model.bin.index.json`, and tensors keep the state dict's order.

use std::path::{Path, PathBuf};

use crate::hf::safetensors::{self, PartFormat, Shards};
use crate::ConvertError;

pub mod checkpoint;
pub mod pickle;
pub mod zip;

/// A PyTorch checkpoint that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {kind}", .path.display())]
pub struct TorchError {
    /// The checkpoint file.
    pub path: PathBuf,
    /// What is wrong.
    pub kind: TorchErrorKind,
}

/// What is wrong with a PyTorch checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum TorchErrorKind {
    /// A checkpoint from before torch 1.6 (a bare pickle or a tar archive).
    #[error(
        "a legacy (pre-1.6, non-zip) PyTorch checkpoint: not supported; load it and save it \
         again with a recent torch.save, or convert it to safetensors"
    )]
    Legacy,
    /// Neither a zip archive nor a legacy checkpoint.
    #[error("not a PyTorch checkpoint (no zip archive signature at byte 0)")]
    NotACheckpoint,
    /// The zip container is malformed.
    #[error(transparent)]
    Zip(#[from] zip::ZipError),
    /// The pickle was refused.
    #[error(transparent)]
    Pickle(#[from] pickle::PickleError),
    /// The archive lacks what a checkpoint has, or holds it in a form we do not read.
    #[error("{0}")]
    Archive(String),
    /// A tensor does not fit its storage or is laid out in a way we do not read.
    #[error("tensor '{name}': {problem}")]
    Tensor {
        /// The state dict key.
        name: String,
        /// What is wrong.
        problem: String,
    },
}

impl TorchError {
    /// The error as a [`ConvertError`].
    pub fn convert_error(path: &Path, kind: impl Into<TorchErrorKind>) -> ConvertError {
        ConvertError::Torch(Box::new(TorchError {
            path: path.to_path_buf(),
            kind: kind.into(),
        }))
    }
}

/// PyTorch parts: `pytorch_model*.bin`, `pytorch_model.bin.index.json`.
pub const PYTORCH_BIN: PartFormat = PartFormat {
    index_name: "pytorch_model.bin.index.json",
    prefix: "pytorch_model",
    suffix: ".bin",
    parse: checkpoint::read_checkpoint,
};

/// Finds, maps and reads the `pytorch_model*.bin` parts of `dir`, checking them against
/// `pytorch_model.bin.index.json` if it exists.
pub fn index_dir(dir: &Path) -> Result<Shards, ConvertError> {
    safetensors::index_parts(dir, &PYTORCH_BIN)
}
