//! The output engine: writes a list of planned outputs, each a model laid out over its
//! shard files, crash-safe ([`crate::output`]), computing the work several outputs share once.
//!
//! A single conversion or quantization is a list of one. [`execute`] picks how:
//!
//! * **one output** ([`alone`]): its tensors streamed into its shards by [`stream`], a
//!   bounded window of tensors (large ones in pieces of rows) computed in parallel ahead of
//!   the writer;
//! * **several outputs** ([`joint`]): all of them advance together a window at a time, and
//!   the f32 stage of a tensor that several outputs encode ([`crate::ir::Stage`]) is computed
//!   once for all of them ([`products`]), within a memory budget.
//!
//! Either way an output's shards are checked against the output rules before anything is
//! written, written one after another, and renamed into place together when the last one is
//! complete; a failed output leaves nothing, and (with several outputs) the others go on.
//! What happens along the way is told to an [`Observer`] (progress bars, reports, a batch's
//! state journal), never decided by it, except that [`Observer::before_commit`] may refuse
//! a commit.

mod alone;
mod joint;
pub mod products;
pub mod stream;
mod writer;

use std::path::PathBuf;

use crate::gguf::GgufError;
use crate::ir::{DataError, Model};
use crate::output::OutputError;

/// One output file (or shard) to write.
pub struct ShardPlan {
    /// Where it goes.
    pub path: PathBuf,
    /// Its metadata and tensors.
    pub model: Model,
}

/// How one output is written.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Files the output must not replace (compared by device and inode).
    pub inputs: Vec<PathBuf>,
    /// Replace existing files.
    pub overwrite: bool,
    /// Sync the files to disk before renaming them into place (`--no-sync` turns it off).
    pub sync: bool,
    /// Bytes computed together ahead of the writer when the output is written alone.
    pub window_bytes: u64,
    /// Compute the sha256 of every file ([`WrittenFile::sha256`]).
    pub digest: bool,
    /// gguf-py's `--vocab-only` file: the header without tensor infos or padding.
    pub vocab_only: bool,
    /// Byte order of the files (big for `convert_hf_to_gguf.py --bigendian`).
    pub byte_order: crate::gguf::ByteOrder,
    /// Byte order of the tensor data the plan's tensors produce: little for everything
    /// computed, the source file's for data copied from a GGUF file (an edit or a split of a
    /// big-endian file keeps its bytes).
    pub data_order: crate::gguf::ByteOrder,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            inputs: Vec::new(),
            overwrite: false,
            sync: true,
            window_bytes: 32 << 20,
            digest: false,
            vocab_only: false,
            byte_order: crate::gguf::ByteOrder::Little,
            data_order: crate::gguf::ByteOrder::Little,
        }
    }
}

/// One output: its shards (one unless split) and how to write them.
pub struct OutputPlan {
    /// The shards in order; the output's tensors are theirs, concatenated.
    pub shards: Vec<ShardPlan>,
    /// How to write them.
    pub options: WriteOptions,
}

impl OutputPlan {
    /// Every tensor of the output, in order.
    pub fn tensors(&self) -> impl Iterator<Item = &crate::ir::Tensor> {
        self.shards.iter().flat_map(|s| s.model.tensors.iter())
    }
}

/// Options of a whole [`execute`].
#[derive(Clone, Copy, Debug)]
pub struct ExecuteOptions {
    /// Memory budget in bytes when several outputs are written together: tensors computed in
    /// a window plus shared products waiting for later outputs.
    pub budget: u64,
}

impl Default for ExecuteOptions {
    fn default() -> Self {
        ExecuteOptions { budget: 1 << 30 }
    }
}

/// One written file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// Its path.
    pub path: PathBuf,
    /// Its size.
    pub size: u64,
    /// sha256 of its bytes, lowercase hex (empty unless [`WriteOptions::digest`]).
    pub sha256: String,
}

/// A finished output.
#[derive(Debug, Clone)]
pub struct WrittenOutput {
    /// Its files (shards in order).
    pub files: Vec<WrittenFile>,
    /// Tensor data bytes (without padding and headers).
    pub tensor_bytes: u64,
    /// Tensor elements.
    pub n_elements: u64,
    /// Wall time from the start of the run to the commit.
    pub seconds: f64,
}

impl WrittenOutput {
    /// Total size of the files.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Bits per weight of the tensor data.
    pub fn bits_per_weight(&self) -> f64 {
        if self.n_elements == 0 {
            0.0
        } else {
            self.tensor_bytes as f64 * 8.0 / self.n_elements as f64
        }
    }
}

/// Why an output failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// An output file could not be created or committed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The layout is invalid or a write failed.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// A tensor could not be produced.
    #[error("tensor '{tensor}': {error}")]
    Data {
        /// The tensor.
        tensor: String,
        /// What failed.
        error: DataError,
    },
    /// The observer refused the commit.
    #[error("{0}")]
    Refused(String),
    /// The engine broke one of its own invariants (a bug, reported rather than a panic).
    #[error("internal: {0}")]
    Internal(String),
}

/// What the engine tells its caller as it goes. Every method has a default that does
/// nothing; calls for different outputs may come from different threads.
pub trait Observer: Sync {
    /// Output `output` is about to be written (its targets passed the output rules).
    fn output_started(&self, output: usize) {
        let _ = output;
    }
    /// Tensor `tensor` (index in the output's order) of output `output` is written;
    /// `bytes` of the output's tensor data are written so far.
    fn tensor_written(&self, output: usize, tensor: usize, bytes: u64) {
        let _ = (output, tensor, bytes);
    }
    /// Output `output` is complete and about to be renamed into place; an error fails it.
    fn before_commit(&self, output: usize, written: &WrittenOutput) -> Result<(), String> {
        let _ = (output, written);
        Ok(())
    }
    /// Output `output` is in place.
    fn output_committed(&self, output: usize, written: &WrittenOutput) {
        let _ = (output, written);
    }
}

impl Observer for () {}

/// Counters of one run (for tests and reports).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Windows processed (several outputs).
    pub windows: u64,
    /// Shared stages read and converted to f32 (above `shared_keys` only after evictions).
    pub decoded: u64,
    /// Distinct f32 stages with products.
    pub shared_keys: u64,
    /// Distinct encoded tensors (products).
    pub products: u64,
    /// Output tensors made from products (above `products` when outputs share them).
    pub product_uses: u64,
    /// Products computed (above `products` only after evictions).
    pub computed_products: u64,
    /// Values dropped early for lack of memory (computed again later).
    pub evictions: u64,
    /// Most product bytes held at once.
    pub peak_cache_bytes: u64,
    /// Largest window (bytes produced).
    pub peak_window_bytes: u64,
}

/// Writes every output of `plans`; returns one result per output, in order, and the run's
/// counters. See the module documentation.
pub fn execute(
    plans: &[OutputPlan],
    opts: &ExecuteOptions,
    observer: &dyn Observer,
) -> (Vec<Result<WrittenOutput, PipelineError>>, Stats) {
    let t0 = std::time::Instant::now();
    match plans {
        [plan] => (vec![alone::write(plan, 0, t0, observer)], Stats::default()),
        _ => joint::write(plans, opts, t0, observer),
    }
}

/// The smallest budget that lets several outputs be written together without evicting at
/// every window: the largest working memory of a shared stage plus, for each output, its
/// largest tensor.
pub fn minimum_budget(plans: &[OutputPlan]) -> u64 {
    joint::minimum_budget(plans)
}

/// The shared f32 stages (see [`crate::ir::Tensor::f32_stage`]) of an output's tensors, for
/// tests and plans: how many of its tensors the engine can compute with other outputs.
pub fn shared_tensors(model: &Model) -> usize {
    model
        .tensors
        .iter()
        .filter(|t| t.f32_stage().is_some())
        .count()
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use ggufkit_quantizers::GgmlType;

    use super::*;
    use crate::gguf::Metadata;
    use crate::ir::{Convert, Tensor, TensorData};

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ggufkit-pipeline-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A model of two f32 tensors quantized to `to` (one input shared by every output).
    fn model(input: &TensorData, to: GgmlType) -> Model {
        let t = |name: &str| {
            let c = Convert::new(input.clone(), GgmlType::F32, to, 256, 8, None).unwrap();
            Tensor {
                name: name.into(),
                dims: vec![256, 8],
                ty: to,
                data: TensorData::Derived(Arc::new(c)),
            }
        };
        Model {
            metadata: Metadata::default(),
            tensors: vec![t("a"), t("b")],
        }
    }

    fn plan(path: PathBuf, model: Model) -> OutputPlan {
        OutputPlan {
            shards: vec![ShardPlan { path, model }],
            options: WriteOptions {
                sync: false,
                digest: true,
                ..WriteOptions::default()
            },
        }
    }

    /// Refuses to commit output 1; records what it is told.
    #[derive(Default)]
    struct Refuse1(Mutex<Vec<String>>);

    impl Observer for Refuse1 {
        fn output_started(&self, output: usize) {
            self.0.lock().unwrap().push(format!("start {output}"));
        }
        fn before_commit(&self, output: usize, _: &WrittenOutput) -> Result<(), String> {
            if output == 1 {
                Err("no".into())
            } else {
                Ok(())
            }
        }
        fn output_committed(&self, output: usize, _: &WrittenOutput) {
            self.0.lock().unwrap().push(format!("commit {output}"));
        }
    }

    /// Outputs written together equal the same outputs written alone; a refused commit leaves
    /// no file and does not stop the others; the shared stage is read once.
    #[test]
    fn joint_outputs_equal_lone_outputs_and_a_refused_one_leaves_nothing() {
        let dir = scratch("joint");
        let values: Vec<u8> = (0..256 * 8)
            .flat_map(|i| ((i as f32 * 0.37).sin()).to_le_bytes())
            .collect();
        let input = TensorData::Owned(Arc::new(values));
        let types = [GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q8_0];
        let mut alone = Vec::new();
        for (i, ty) in types.iter().enumerate() {
            let p = plan(dir.join(format!("alone-{i}.gguf")), model(&input, *ty));
            let (mut r, _) = execute(&[p], &ExecuteOptions::default(), &());
            alone.push(r.remove(0).unwrap());
        }
        let plans: Vec<OutputPlan> = types
            .iter()
            .enumerate()
            .map(|(i, ty)| plan(dir.join(format!("joint-{i}.gguf")), model(&input, *ty)))
            .collect();
        let observer = Refuse1::default();
        let (results, stats) = execute(&plans, &ExecuteOptions::default(), &observer);
        assert_eq!(stats.shared_keys, 1, "one input, one stage");
        assert_eq!(stats.decoded, 1);
        assert_eq!(stats.products, 2, "Q8_0 twice is one product");
        assert!(matches!(&results[1], Err(PipelineError::Refused(m)) if m == "no"));
        assert!(!dir.join("joint-1.gguf").exists());
        for i in [0, 2] {
            let w = results[i].as_ref().unwrap();
            assert_eq!(w.files[0].sha256, alone[i].files[0].sha256, "output {i}");
            let bytes = std::fs::read(dir.join(format!("joint-{i}.gguf"))).unwrap();
            assert_eq!(
                bytes,
                std::fs::read(dir.join(format!("alone-{i}.gguf"))).unwrap()
            );
        }
        let seen = observer.0.lock().unwrap().clone();
        for e in ["start 0", "start 1", "start 2", "commit 0", "commit 2"] {
            assert!(seen.iter().any(|s| s == e), "{e}: {seen:?}");
        }
        assert!(!seen.iter().any(|s| s == "commit 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
