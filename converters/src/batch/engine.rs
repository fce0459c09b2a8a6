//! N outputs of one source written in one pass.
//!
//! Each output is a *writer*: its shard files (checked up front, created one after another as
//! its tensors reach them, so one file per output is open at a time), its
//! tensors' needs in output order — a *product* (an encoding of a base tensor, possibly
//! shared with other outputs, see [`share::Products`]) or its own lazy data — and a cursor.
//! The engine advances all writers together, one *window* at a time:
//!
//! 1. **Select** the next tensors of the writers within the memory budget: the bytes the
//!    window will produce plus the products already waiting must fit. Tensors whose product
//!    is already computed go first (that drains the waiting products); otherwise the
//!    writer furthest behind goes next, so writers whose tensor orders differ
//!    (llama-quantize's block-then-name order against a converter's order) stay close and
//!    a product rarely waits long. Needing a product schedules every pending product of
//!    its base tensor. A window always takes at least one tensor, so a tensor larger than
//!    the budget is still converted.
//! 2. **Compute**, in parallel: for each scheduled base tensor, one read and one f32
//!    conversion, slab by slab, feeding all of its products ([`share::compute_products`]);
//!    and the outputs' own tensors.
//! 3. **Write** each writer's tensors in its own order (writers in parallel, each file
//!    sequentially), hashing the bytes as they go.
//! 4. **Release** the consumed uses: a product is dropped after its last use. If the
//!    products still waiting exceed half the budget, those needed furthest ahead are
//!    evicted (and computed again when their turn comes: bounded memory, same bytes).
//!
//! No thread waits for another inside a parallel section (the phases are separate), and
//! every computation is deterministic, so the files do not depend on the thread count.
//! A writer that fails (a tensor that cannot be produced, a full disk) is dropped — its
//! temporary files removed — and the others go on. A writer that has written its last
//! tensor is committed at once (all of its shards together).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use ggufkit::gguf::{layout, write_tensor_padded, GgufError, Layout};
use ggufkit::ir::{DataError, Model, TensorData};
use ggufkit::output::{AtomicOutput, FinishedOutput, OutputError, OutputRules};

use super::share::{self, Need, Products, Recipe, SharedValues};

/// One output file (or shard) to write.
pub struct ShardPlan {
    /// Where it goes.
    pub path: PathBuf,
    /// Its metadata and tensors.
    pub model: Model,
}

/// One output: its shards (one unless split) and its tensors' recipes in output order
/// (the shards' tensors, concatenated).
pub struct OutputPlan {
    /// The shards in order.
    pub shards: Vec<ShardPlan>,
    /// One recipe per tensor (see [`super::share::rebase`]).
    pub recipes: Vec<Recipe>,
    /// gguf-py's `--vocab-only` file: the header without tensor infos or padding.
    pub vocab_only: bool,
}

/// Options of [`write_outputs`].
pub struct EngineOptions {
    /// Memory budget in bytes: tensors computed in a window plus products waiting for
    /// later outputs.
    pub budget: u64,
    /// Files the outputs must not replace.
    pub inputs: Vec<PathBuf>,
    /// Replace existing files.
    pub overwrite: bool,
    /// Sync files to disk before renaming them into place.
    pub sync: bool,
}

/// One written file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// Its path.
    pub path: PathBuf,
    /// Its size.
    pub size: u64,
    /// sha256 of its bytes, lowercase hex.
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
    /// Wall time from the start of the pass to the commit.
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
pub enum EngineError {
    /// The output file could not be created or committed.
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
    /// The caller refused the commit.
    #[error("{0}")]
    Refused(String),
}

/// What the engine tells its caller as it goes.
pub trait Hooks: Sync {
    /// Output `index` has written `bytes` of its tensor data so far.
    fn progress(&self, _index: usize, _bytes: u64) {}
    /// Output `index` is complete and about to be renamed into place; an error fails it.
    fn before_commit(&self, _index: usize, _out: &WrittenOutput) -> Result<(), String> {
        Ok(())
    }
}

impl Hooks for () {}

/// Counters of one pass (for tests and `--json`).
#[derive(Debug, Clone, Default)]
pub struct EngineStats {
    /// Windows processed.
    pub windows: u64,
    /// Base tensors read and converted to f32 (above `shared_keys` only after evictions).
    pub decoded: u64,
    /// Distinct base tensors with products.
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

struct Hashing<'a, W: Write> {
    inner: &'a mut W,
    hasher: &'a mut Sha256,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

struct Shard {
    /// Open while its tensors are being written (one shard of an output at a time).
    out: Option<AtomicOutput>,
    /// Complete, waiting to be renamed with the output's other shards.
    finished: Option<FinishedOutput>,
    layout: Layout,
    hasher: Sha256,
    size: u64,
    path: PathBuf,
    n_tensors: usize,
}

struct Writer {
    shards: Vec<Shard>,
    /// Shards before this one are finished; this one is open or not yet opened.
    current: usize,
    /// Per tensor: (shard, index in shard).
    place: Vec<(usize, usize)>,
    sizes: Vec<u64>,
    names: Vec<String>,
    n_elements: u64,
    next: usize,
    written: u64,
    vocab_only: bool,
    inputs: Vec<PathBuf>,
    overwrite: bool,
    sync: bool,
    result: Option<Result<WrittenOutput, EngineError>>,
}

impl Writer {
    /// Plans every shard and checks every target against the output rules up front; the
    /// files themselves are created one at a time as the tensors reach them.
    fn open(plan: &OutputPlan, opts: &EngineOptions) -> Result<Writer, EngineError> {
        let mut w = Writer::empty();
        w.vocab_only = plan.vocab_only;
        w.inputs = opts.inputs.clone();
        w.overwrite = opts.overwrite;
        w.sync = opts.sync;
        for (si, s) in plan.shards.iter().enumerate() {
            let headers = if plan.vocab_only {
                Vec::new()
            } else {
                s.model.headers()
            };
            let layout = layout(&s.model.metadata, &headers).map_err(|e| e.with_path(&s.path))?;
            ggufkit::output::check(&s.path, &w.rules(&w.input_refs()))?;
            let size = if plan.vocab_only {
                layout.header_len as u64
            } else {
                layout.file_size
            };
            for (j, t) in headers.iter().enumerate() {
                w.place.push((si, j));
                w.sizes.push(layout.sizes[j]);
                w.names.push(t.name.clone());
                w.n_elements += t.dims.iter().product::<u64>();
            }
            w.shards.push(Shard {
                out: None,
                finished: None,
                n_tensors: headers.len(),
                layout,
                hasher: Sha256::new(),
                size,
                path: s.path.clone(),
            });
        }
        if w.place.len() != plan.recipes.len() {
            return Err(EngineError::Refused(format!(
                "internal: {} recipes for {} tensors",
                plan.recipes.len(),
                w.place.len()
            )));
        }
        Ok(w)
    }

    fn input_refs(&self) -> Vec<&std::path::Path> {
        self.inputs.iter().map(PathBuf::as_path).collect()
    }

    fn rules<'a>(&self, inputs: &'a [&'a std::path::Path]) -> OutputRules<'a> {
        OutputRules {
            inputs,
            overwrite: self.overwrite,
            sync: self.sync,
        }
    }

    /// Makes shard `s` the open one: finishes the shards before it (creating those not yet
    /// created, such as a tensor-less first shard) and creates `s` with its header.
    fn advance_to(&mut self, s: usize) -> Result<(), EngineError> {
        while self.current < s || (self.current == s && self.shards[s].out.is_none()) {
            let c = self.current;
            if self.shards[c].out.is_none() && self.shards[c].finished.is_none() {
                let inputs = self.inputs.clone();
                let inputs: Vec<&std::path::Path> = inputs.iter().map(PathBuf::as_path).collect();
                let rules = self.rules(&inputs);
                let vocab_only = self.vocab_only;
                let shard = &mut self.shards[c];
                let mut out = AtomicOutput::create(&shard.path, &rules)?;
                let head = if vocab_only {
                    &shard.layout.header[..shard.layout.header_len]
                } else {
                    &shard.layout.header[..]
                };
                Hashing {
                    inner: &mut out,
                    hasher: &mut shard.hasher,
                }
                .write_all(head)
                .map_err(|source| GgufError::Io {
                    path: Some(shard.path.clone()),
                    source,
                })?;
                shard.out = Some(out);
            }
            if c == s {
                break;
            }
            let shard = &mut self.shards[c];
            if let Some(out) = shard.out.take() {
                shard.finished = Some(out.finish()?);
            }
            self.current += 1;
        }
        Ok(())
    }

    fn empty() -> Writer {
        Writer {
            shards: Vec::new(),
            current: 0,
            place: Vec::new(),
            sizes: Vec::new(),
            names: Vec::new(),
            n_elements: 0,
            next: 0,
            written: 0,
            vocab_only: false,
            inputs: Vec::new(),
            overwrite: false,
            sync: true,
            result: None,
        }
    }

    fn active(&self) -> bool {
        self.result.is_none()
    }

    fn write(&mut self, i: usize, data: &[u8]) -> Result<(), EngineError> {
        let (s, j) = self.place[i];
        self.advance_to(s)?;
        let shard = &mut self.shards[s];
        let zeros = [0u8; 64];
        let mut zeros_v = Vec::new();
        let zeros: &[u8] = if shard.layout.alignment as usize <= zeros.len() {
            &zeros[..]
        } else {
            zeros_v.resize(shard.layout.alignment as usize, 0);
            &zeros_v
        };
        let out = shard.out.as_mut().expect("open until committed");
        let mut w = Hashing {
            inner: out,
            hasher: &mut shard.hasher,
        };
        write_tensor_padded(&mut w, &shard.layout, j, data, zeros).map_err(|e| match e {
            GgufError::Invalid(msg) => EngineError::Data {
                tensor: self.names[i].clone(),
                error: DataError(msg),
            },
            e => EngineError::Gguf(e.with_path(&shard.path)),
        })?;
        self.written += data.len() as u64;
        Ok(())
    }

    fn finish(
        &mut self,
        index: usize,
        t0: Instant,
        hooks: &dyn Hooks,
    ) -> Result<WrittenOutput, EngineError> {
        if let Some(last) = self.shards.len().checked_sub(1) {
            self.advance_to(last)?;
            let shard = &mut self.shards[last];
            if let Some(out) = shard.out.take() {
                shard.finished = Some(out.finish()?);
            }
        }
        let mut files = Vec::new();
        for s in &mut self.shards {
            let hasher = std::mem::take(&mut s.hasher);
            files.push(WrittenFile {
                path: s.path.clone(),
                size: s.size,
                sha256: hex(&hasher.finalize()),
            });
            debug_assert_eq!(
                s.n_tensors,
                s.layout.sizes.len().min(s.n_tensors),
                "shard tensor count"
            );
        }
        let mut done = WrittenOutput {
            files,
            tensor_bytes: self.sizes.iter().sum(),
            n_elements: self.n_elements,
            seconds: 0.0,
        };
        hooks
            .before_commit(index, &done)
            .map_err(EngineError::Refused)?;
        for s in &mut self.shards {
            s.finished.take().expect("commit once").commit(self.sync)?;
        }
        done.seconds = t0.elapsed().as_secs_f64();
        Ok(done)
    }

    /// Drops the temporary files.
    fn abandon(&mut self, e: EngineError) {
        for s in &mut self.shards {
            s.out = None;
            s.finished = None;
        }
        self.result = Some(Err(e));
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Working memory of reading base tensor `key`: a transform makes the whole tensor (in f32
/// for a HuggingFace source); mapped data is converted a slab (4 Mi values) at a time.
fn f32_cost(base: &Model, key: usize) -> u64 {
    let t = &base.tensors[key];
    match &t.data {
        TensorData::Derived(_) => t.n_elements() * 4,
        _ => (t.n_elements() * 4).min(16 << 20),
    }
}

/// The smallest budget that lets the engine work without evicting at every window: the
/// largest working memory of a base tensor plus, for each output, its largest tensor.
pub fn minimum_budget(base: &Model, outputs: &[OutputPlan]) -> u64 {
    let f32_max = (0..base.tensors.len())
        .map(|k| f32_cost(base, k))
        .max()
        .unwrap_or(0);
    let out_max: u64 = outputs
        .iter()
        .map(|o| {
            o.shards
                .iter()
                .flat_map(|s| s.model.tensors.iter())
                .map(|t| ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
                .max()
                .unwrap_or(0)
        })
        .sum();
    f32_max + out_max
}

/// Writes every output of one source in one pass. `base` is the model the recipes' keys
/// index. Returns one result per output, in order, and the pass's counters.
pub fn write_outputs(
    base: &Model,
    outputs: &[OutputPlan],
    opts: &EngineOptions,
    hooks: &dyn Hooks,
) -> (Vec<Result<WrittenOutput, EngineError>>, EngineStats) {
    let t0 = Instant::now();
    let budget = opts.budget.max(1);
    let mut products = Products::default();
    let needs: Vec<Vec<Need>> = outputs
        .iter()
        .map(|o| share::needs(&o.recipes, &mut products))
        .collect();
    let product_of = |w: usize, pos: usize| match &needs[w][pos] {
        Need::Product(p) => Some(*p),
        Need::Own(_) => None,
    };
    let mut values = SharedValues::default();
    let mut product_size: HashMap<usize, u64> = HashMap::new();
    let mut product_uses: HashMap<usize, usize> = HashMap::new();
    for (w, o) in outputs.iter().enumerate() {
        let sizes: Vec<u64> = o
            .shards
            .iter()
            .flat_map(|s| s.model.tensors.iter())
            .map(|t| ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
            .collect();
        for (pos, n) in needs[w].iter().enumerate() {
            if let Need::Product(p) = n {
                *product_uses.entry(*p).or_default() += 1;
                product_size.insert(*p, sizes.get(pos).copied().unwrap_or(0));
            }
        }
    }
    for (&p, &n) in &product_uses {
        values.add_uses(p, n);
    }
    let mut stats = EngineStats {
        shared_keys: product_uses
            .keys()
            .map(|p| products.key(*p))
            .collect::<BTreeSet<_>>()
            .len() as u64,
        products: products.len() as u64,
        product_uses: product_uses.values().map(|n| *n as u64).sum(),
        ..Default::default()
    };
    // Per writer, the positions at which each product is used (for eviction decisions).
    let uses: Vec<HashMap<usize, Vec<usize>>> = needs
        .iter()
        .map(|n| {
            let mut m: HashMap<usize, Vec<usize>> = HashMap::new();
            for (i, need) in n.iter().enumerate() {
                if let Need::Product(p) = need {
                    m.entry(*p).or_default().push(i);
                }
            }
            m
        })
        .collect();

    let mut writers: Vec<Writer> = Vec::with_capacity(outputs.len());
    for (w, o) in outputs.iter().enumerate() {
        match Writer::open(o, opts) {
            Ok(wr) => writers.push(wr),
            Err(e) => {
                for pos in 0..o.recipes.len() {
                    if let Some(p) = product_of(w, pos) {
                        values.release(p);
                    }
                }
                let mut wr = Writer::empty();
                wr.abandon(e);
                writers.push(wr);
            }
        }
    }

    loop {
        // Finish writers that have written everything (in parallel: each commit syncs
        // its files to disk).
        writers.par_iter_mut().enumerate().for_each(|(i, w)| {
            if w.active() && w.next == w.sizes.len() {
                match w.finish(i, t0, hooks) {
                    Ok(done) => w.result = Some(Ok(done)),
                    Err(e) => w.abandon(e),
                }
            }
        });
        if !writers.iter().any(Writer::active) {
            break;
        }

        // 1. Select. Scheduling a product schedules every pending product of its base
        // tensor: the tensor is read once for all of them.
        let mut cursor: Vec<usize> = writers.iter().map(|w| w.next).collect();
        let mut items: Vec<(usize, usize)> = Vec::new();
        let mut keys: BTreeSet<usize> = BTreeSet::new();
        let mut scheduled: BTreeSet<usize> = BTreeSet::new();
        let mut cost = 0u64;
        let held = values.held_bytes();
        loop {
            // (free, progress, writer, cost)
            let mut best: Option<(bool, f64, usize, u64)> = None;
            for (w, wr) in writers.iter().enumerate() {
                if !wr.active() || cursor[w] >= wr.sizes.len() {
                    continue;
                }
                let pos = cursor[w];
                let (free, c) = match product_of(w, pos) {
                    None => (false, wr.sizes[pos]),
                    Some(p) if values.contains(p) || scheduled.contains(&p) => (true, 0),
                    Some(p) => (
                        false,
                        products
                            .of_key(products.key(p))
                            .iter()
                            .filter(|&&q| values.remaining(q) > 0 && !values.contains(q))
                            .map(|q| product_size.get(q).copied().unwrap_or(0))
                            .sum(),
                    ),
                };
                let frac = pos as f64 / wr.sizes.len().max(1) as f64;
                let better = match &best {
                    None => true,
                    Some((bfree, bfrac, ..)) => {
                        (free && !bfree) || (free == *bfree && frac < *bfrac)
                    }
                };
                if better {
                    best = Some((free, frac, w, c));
                }
            }
            let Some((_, _, w, c)) = best else {
                break;
            };
            if !items.is_empty() && held + cost + c > budget {
                break;
            }
            let pos = cursor[w];
            items.push((w, pos));
            cursor[w] += 1;
            cost += c;
            if let Some(p) = product_of(w, pos) {
                if !values.contains(p) && !scheduled.contains(&p) {
                    let k = products.key(p);
                    keys.insert(k);
                    scheduled.extend(
                        products
                            .of_key(k)
                            .iter()
                            .filter(|&&q| values.remaining(q) > 0 && !values.contains(q)),
                    );
                }
            }
        }
        if items.is_empty() {
            break;
        }
        stats.windows += 1;
        stats.peak_window_bytes = stats.peak_window_bytes.max(cost);

        // 2. Compute, in parallel: every scheduled product (one read of each base tensor
        // for all its products) and the outputs' own tensors.
        enum Task {
            Key(usize),
            Own(usize),
        }
        let tasks: Vec<Task> = keys
            .iter()
            .map(|&k| Task::Key(k))
            .chain(
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, &(w, pos))| product_of(w, pos).is_none())
                    .map(|(i, _)| Task::Own(i)),
            )
            .collect();
        let scheduled_ref = &scheduled;
        let products_ref = &products;
        type Done = Result<Vec<(usize, Vec<u8>)>, (Vec<usize>, DataError)>;
        enum Out<'a> {
            Key(Done),
            Own(usize, Result<Cow<'a, [u8]>, DataError>),
        }
        let done: Vec<Out> = tasks
            .par_iter()
            .map(|task| match task {
                Task::Key(k) => {
                    let ids: Vec<usize> = products_ref
                        .of_key(*k)
                        .iter()
                        .copied()
                        .filter(|q| scheduled_ref.contains(q))
                        .collect();
                    let encodes: Vec<&share::Encode> =
                        ids.iter().map(|&q| products_ref.encode(q)).collect();
                    let t = &base.tensors[*k];
                    let r = share::compute_products(t, &encodes);
                    // Every pending product of this tensor is made: its mapped pages can go.
                    t.data.release();
                    Out::Key(match r {
                        Ok(bytes) => Ok(ids.into_iter().zip(bytes).collect()),
                        Err(e) => Err((ids, e)),
                    })
                }
                Task::Own(i) => {
                    let (w, pos) = items[*i];
                    match &needs[w][pos] {
                        Need::Own(d) => Out::Own(*i, d.bytes()),
                        Need::Product(_) => unreachable!("own tasks only"),
                    }
                }
            })
            .collect();
        let mut own: HashMap<usize, Result<Cow<[u8]>, DataError>> = HashMap::new();
        let mut failed: HashMap<usize, DataError> = HashMap::new();
        for d in done {
            match d {
                Out::Own(i, r) => {
                    own.insert(i, r);
                }
                Out::Key(Ok(v)) => {
                    stats.decoded += 1;
                    for (p, bytes) in v {
                        values.insert(p, bytes);
                        stats.computed_products += 1;
                    }
                }
                Out::Key(Err((ids, e))) => {
                    for p in ids {
                        failed.insert(p, e.clone());
                    }
                }
            }
        }

        // 3. Write, each writer in its own order, writers in parallel.
        type Bytes<'a> = Result<Cow<'a, [u8]>, DataError>;
        let mut per_writer: Vec<Vec<(usize, Bytes)>> =
            (0..writers.len()).map(|_| Vec::new()).collect();
        for (i, &(w, pos)) in items.iter().enumerate() {
            let r = match product_of(w, pos) {
                None => own.remove(&i).expect("own task ran"),
                Some(p) => match (failed.get(&p), values.get(p)) {
                    (Some(e), _) => Err(e.clone()),
                    (None, Some(v)) => Ok(Cow::Borrowed(v.as_slice())),
                    (None, None) => Err(DataError(format!("internal: product {p} missing"))),
                },
            };
            per_writer[w].push((pos, r));
        }
        writers
            .par_iter_mut()
            .zip(per_writer.into_par_iter())
            .for_each(|(wr, work)| {
                for (pos, r) in work {
                    if !wr.active() {
                        break;
                    }
                    debug_assert_eq!(pos, wr.next);
                    let res = r
                        .map_err(|error| EngineError::Data {
                            tensor: wr.names[pos].clone(),
                            error,
                        })
                        .and_then(|data| wr.write(pos, &data));
                    match res {
                        Ok(()) => wr.next += 1,
                        Err(e) => wr.abandon(e),
                    }
                }
            });
        // The outputs' own inputs are not needed again (a later reader faults pages back).
        for &(w, pos) in &items {
            if let Need::Own(d) = &needs[w][pos] {
                d.release();
            }
        }
        for (i, w) in writers.iter().enumerate() {
            if w.active() {
                hooks.progress(i, w.written);
            }
        }

        // 4. Release what was consumed; a failed writer releases everything it still owed.
        for &(w, pos) in &items {
            if let Some(p) = product_of(w, pos) {
                values.release(p);
            }
        }
        for (w, wr) in writers.iter_mut().enumerate() {
            if !wr.active() && wr.next < wr.sizes.len() {
                for pos in cursor[w].max(wr.next)..wr.sizes.len() {
                    if let Some(p) = product_of(w, pos) {
                        values.release(p);
                    }
                }
                // Nothing more is owed by this writer.
                wr.next = wr.sizes.len();
            }
        }
        stats.peak_cache_bytes = stats.peak_cache_bytes.max(values.peak_bytes());
        // Keep at most half the budget for products that wait for later outputs: evict
        // those needed furthest ahead.
        if values.held_bytes() > budget / 2 {
            let mut held: Vec<(usize, usize)> = values
                .held()
                .into_iter()
                .map(|(p, _)| {
                    let next_use = writers
                        .iter()
                        .enumerate()
                        .filter(|(_, wr)| wr.active())
                        .filter_map(|(w, wr)| {
                            let u = uses[w].get(&p)?;
                            let i = u.partition_point(|&x| x < wr.next);
                            u.get(i).map(|&x| x - wr.next)
                        })
                        .min()
                        .unwrap_or(usize::MAX);
                    (p, next_use)
                })
                .collect();
            held.sort_by_key(|&(p, next)| (std::cmp::Reverse(next), p));
            for (p, _) in held {
                if values.held_bytes() <= budget / 2 {
                    break;
                }
                if values.evict(p) {
                    stats.evictions += 1;
                }
            }
        }
    }
    stats.peak_cache_bytes = stats.peak_cache_bytes.max(values.peak_bytes());
    let results = writers
        .into_iter()
        .map(|w| {
            w.result.unwrap_or_else(|| {
                Err(EngineError::Refused(
                    "internal: output left unfinished".into(),
                ))
            })
        })
        .collect();
    (results, stats)
}
