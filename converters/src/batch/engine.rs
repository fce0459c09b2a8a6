//! N outputs of one source written in one pass.
//!
//! Each output is a *writer*: its shard files (created up front, headers written), its
//! tensors' [`Recipe`]s in output order, and a cursor. The engine advances all writers
//! together, one *window* at a time:
//!
//! 1. **Select** the next tensors of the writers, within the memory budget: the window's
//!    encoded output bytes, plus the f32 values it needs that are not cached yet, plus the
//!    values already held must fit. Tensors whose f32 values are already available go
//!    first (that drains the cache); otherwise the writer furthest behind goes next, so
//!    writers whose tensor orders differ (llama-quantize's block-then-name order against a
//!    converter's order) stay close and an f32 value rarely waits long for its last user.
//!    A window always takes at least one tensor, so one tensor larger than the budget is
//!    still converted.
//! 2. **Decode** the missing f32 values, in parallel ([`decode_f32`]): each source tensor
//!    is read and converted to f32 once, whatever the number of outputs.
//! 3. **Encode** every selected tensor, in parallel ([`produce`]), from the shared values.
//! 4. **Write** each writer's tensors in its own order (writers in parallel, each file
//!    sequentially), hashing the bytes as they go.
//! 5. **Release** the consumed uses: an f32 value is dropped after its last use. If the
//!    values still held exceed half the budget, those needed furthest in the future are
//!    evicted (and decoded again when their turn comes: bounded memory, same bytes).
//!
//! No thread ever waits for another inside a parallel section (the phases are separate),
//! and every computation is deterministic, so the files do not depend on the thread count.
//! A writer that fails (a tensor that cannot be produced, a full disk) is dropped — its
//! temporary files removed — and the others go on. A writer that has written its last
//! tensor is committed at once (all of its shards together).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use ggufkit::gguf::{layout, write_tensor_padded, GgufError, Layout};
use ggufkit::ir::{DataError, Model, TensorData};
use ggufkit::output::{AtomicOutput, OutputError};
use ggufkit::quantizers::GgmlType;

use std::sync::Arc;

use super::share::{self, decode_f32, Need, Products, Recipe, SharedValues, Slot};

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
    /// Memory budget in bytes: encoded tensors in flight plus shared f32 values.
    pub budget: u64,
    /// Files the outputs must not replace.
    pub inputs: Vec<PathBuf>,
    /// Replace existing files.
    pub overwrite: bool,
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
    /// Time spent producing this output's tensors, summed over threads.
    pub cpu_seconds: f64,
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
    /// Shared f32 values decoded (above the number of shared keys only after evictions).
    pub decoded: u64,
    /// Distinct base tensors whose f32 values are shared.
    pub shared_keys: u64,
    /// Distinct encoded tensors (products).
    pub products: u64,
    /// Output tensors made from products (above `products` when outputs share them).
    pub product_uses: u64,
    /// Products computed (above `products` only after evictions).
    pub computed_products: u64,
    /// Values dropped early for lack of memory (computed again later).
    pub evictions: u64,
    /// Most f32 bytes held at once.
    pub peak_cache_bytes: u64,
    /// Largest window (encoded bytes + new f32 values).
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
    out: Option<AtomicOutput>,
    layout: Layout,
    hasher: Sha256,
    size: u64,
    path: PathBuf,
    n_tensors: usize,
}

struct Writer {
    shards: Vec<Shard>,
    /// Per tensor: (shard, index in shard).
    place: Vec<(usize, usize)>,
    sizes: Vec<u64>,
    names: Vec<String>,
    n_elements: u64,
    next: usize,
    written: u64,
    cpu: Duration,
    result: Option<Result<WrittenOutput, EngineError>>,
}

impl Writer {
    fn open(plan: &OutputPlan, opts: &EngineOptions) -> Result<Writer, EngineError> {
        let inputs: Vec<&std::path::Path> = opts.inputs.iter().map(PathBuf::as_path).collect();
        let mut shards = Vec::new();
        let mut place = Vec::new();
        let mut sizes = Vec::new();
        let mut names = Vec::new();
        let mut n_elements = 0;
        for (si, s) in plan.shards.iter().enumerate() {
            let headers = if plan.vocab_only {
                Vec::new()
            } else {
                s.model.headers()
            };
            let layout = layout(&s.model.metadata, &headers).map_err(|e| e.with_path(&s.path))?;
            let mut out = AtomicOutput::create(&s.path, &inputs, opts.overwrite)?;
            let mut hasher = Sha256::new();
            let head = if plan.vocab_only {
                &layout.header[..layout.header_len]
            } else {
                &layout.header[..]
            };
            Hashing {
                inner: &mut out,
                hasher: &mut hasher,
            }
            .write_all(head)
            .map_err(|source| GgufError::Io {
                path: Some(s.path.clone()),
                source,
            })?;
            let size = if plan.vocab_only {
                layout.header_len as u64
            } else {
                layout.file_size
            };
            for (j, t) in headers.iter().enumerate() {
                place.push((si, j));
                sizes.push(layout.sizes[j]);
                names.push(t.name.clone());
                n_elements += t.dims.iter().product::<u64>();
            }
            shards.push(Shard {
                out: Some(out),
                n_tensors: headers.len(),
                layout,
                hasher,
                size,
                path: s.path.clone(),
            });
        }
        if place.len() != plan.recipes.len() {
            return Err(EngineError::Refused(format!(
                "internal: {} recipes for {} tensors",
                plan.recipes.len(),
                place.len()
            )));
        }
        Ok(Writer {
            shards,
            place,
            sizes,
            names,
            n_elements,
            next: 0,
            written: 0,
            cpu: Duration::ZERO,
            result: None,
        })
    }

    fn empty() -> Writer {
        Writer {
            shards: Vec::new(),
            place: Vec::new(),
            sizes: Vec::new(),
            names: Vec::new(),
            n_elements: 0,
            next: 0,
            written: 0,
            cpu: Duration::ZERO,
            result: None,
        }
    }

    fn active(&self) -> bool {
        self.result.is_none()
    }

    fn write(&mut self, i: usize, data: &[u8]) -> Result<(), EngineError> {
        let (s, j) = self.place[i];
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
        let mut files = Vec::new();
        for s in &mut self.shards {
            let out = s.out.as_mut().expect("open until committed");
            out.flush().map_err(|source| GgufError::Io {
                path: Some(s.path.clone()),
                source,
            })?;
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
            cpu_seconds: self.cpu.as_secs_f64(),
        };
        hooks
            .before_commit(index, &done)
            .map_err(EngineError::Refused)?;
        for s in &mut self.shards {
            s.out.take().expect("commit once").commit()?;
        }
        done.seconds = t0.elapsed().as_secs_f64();
        Ok(done)
    }

    /// Drops the temporary files.
    fn abandon(&mut self, e: EngineError) {
        for s in &mut self.shards {
            s.out = None;
        }
        self.result = Some(Err(e));
    }
}

/// An encoded tensor (or why it could not be produced) and the time it took.
type Produced<'a> = (Result<Cow<'a, [u8]>, DataError>, Duration);

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Memory the f32 values of base tensor `t` take when decoded (0 when they are mapped
/// f32 bytes).
fn f32_cost(base: &Model, key: usize) -> u64 {
    let t = &base.tensors[key];
    match (&t.data, t.ty) {
        (TensorData::Mapped { .. } | TensorData::Owned(_), GgmlType::F32) => 0,
        _ => t.n_elements() * 4,
    }
}

/// The smallest budget that lets the engine work without evicting at every window: the
/// largest base f32 value plus, for each output, its largest tensor.
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
    let slot_of = |w: usize, pos: usize| match &needs[w][pos] {
        Need::Shared(s) => Some(*s),
        Need::Own(_) => None,
    };
    // Uses: an item uses its slot; a product not yet computed uses its base f32 value once.
    let mut values = SharedValues::default();
    let mut items_per_slot: HashMap<Slot, usize> = HashMap::new();
    for n in needs.iter().flatten() {
        if let Need::Shared(s) = n {
            *items_per_slot.entry(*s).or_default() += 1;
        }
    }
    for (&s, &n) in &items_per_slot {
        values.add_uses(s, n);
        if let Slot::Product(p) = s {
            values.add_uses(Slot::F32(products.key(p)), 1);
        }
    }
    let mut stats = EngineStats {
        shared_keys: items_per_slot
            .keys()
            .map(|s| match s {
                Slot::F32(k) => *k,
                Slot::Product(p) => products.key(*p),
            })
            .collect::<BTreeSet<_>>()
            .len() as u64,
        products: products.len() as u64,
        product_uses: items_per_slot
            .iter()
            .filter(|(s, _)| matches!(s, Slot::Product(_)))
            .map(|(_, n)| *n as u64)
            .sum(),
        ..Default::default()
    };
    // Per writer, the positions at which each base tensor and each product is used (for
    // eviction decisions).
    let uses: Vec<HashMap<Slot, Vec<usize>>> = needs
        .iter()
        .map(|n| {
            let mut m: HashMap<Slot, Vec<usize>> = HashMap::new();
            for (i, need) in n.iter().enumerate() {
                if let Need::Shared(s) = need {
                    m.entry(*s).or_default().push(i);
                    if let Slot::Product(p) = s {
                        m.entry(Slot::F32(products.key(*p))).or_default().push(i);
                    }
                }
            }
            m
        })
        .collect();

    // Consumes one use of `slot`; a product that will never be computed gives back the
    // use of its f32 value it held.
    fn release(values: &mut SharedValues, products: &Products, slot: Slot) {
        if values.release(slot) {
            if let Slot::Product(p) = slot {
                values.release(Slot::F32(products.key(p)));
            }
        }
    }

    let mut writers: Vec<Writer> = Vec::with_capacity(outputs.len());
    for (w, o) in outputs.iter().enumerate() {
        match Writer::open(o, opts) {
            Ok(wr) => writers.push(wr),
            Err(e) => {
                for pos in 0..o.recipes.len() {
                    if let Some(s) = slot_of(w, pos) {
                        release(&mut values, &products, s);
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

        // 1. Select.
        let mut cursor: Vec<usize> = writers.iter().map(|w| w.next).collect();
        let mut items: Vec<(usize, usize)> = Vec::new();
        let mut new_f32: BTreeSet<usize> = BTreeSet::new();
        let mut new_products: BTreeSet<usize> = BTreeSet::new();
        let mut cost = 0u64;
        let held = values.held_bytes();
        loop {
            // (free, progress, writer, cost, new f32 key, new product)
            type Pick = (bool, f64, usize, u64, Option<usize>, Option<usize>);
            let mut best: Option<Pick> = None;
            for (w, wr) in writers.iter().enumerate() {
                if !wr.active() || cursor[w] >= wr.sizes.len() {
                    continue;
                }
                let pos = cursor[w];
                let f32_needed = |k: usize| {
                    (!values.contains(Slot::F32(k)) && !new_f32.contains(&k)).then_some(k)
                };
                let (c, nk, np) = match slot_of(w, pos) {
                    None => (wr.sizes[pos], None, None),
                    Some(Slot::F32(k)) => {
                        let nk = f32_needed(k);
                        (nk.map_or(0, |k| f32_cost(base, k)), nk, None)
                    }
                    Some(Slot::Product(p)) => {
                        if values.contains(Slot::Product(p)) || new_products.contains(&p) {
                            (0, None, None)
                        } else {
                            let nk = f32_needed(products.key(p));
                            (
                                wr.sizes[pos] + nk.map_or(0, |k| f32_cost(base, k)),
                                nk,
                                Some(p),
                            )
                        }
                    }
                };
                let free = nk.is_none() && np.is_none() && slot_of(w, pos).is_some();
                let frac = pos as f64 / wr.sizes.len().max(1) as f64;
                let better = match &best {
                    None => true,
                    Some((bfree, bfrac, ..)) => {
                        (free && !bfree) || (free == *bfree && frac < *bfrac)
                    }
                };
                if better {
                    best = Some((free, frac, w, c, nk, np));
                }
            }
            let Some((_, _, w, c, nk, np)) = best else {
                break;
            };
            if !items.is_empty() && held + cost + c > budget {
                break;
            }
            items.push((w, cursor[w]));
            cursor[w] += 1;
            cost += c;
            if let Some(k) = nk {
                new_f32.insert(k);
            }
            if let Some(p) = np {
                new_products.insert(p);
            }
        }
        if items.is_empty() {
            break;
        }
        stats.windows += 1;
        stats.peak_window_bytes = stats.peak_window_bytes.max(cost);

        // 2. Decode the f32 values this window needs.
        let decoded: Vec<(usize, Result<TensorData, DataError>)> = new_f32
            .par_iter()
            .map(|&k| (k, decode_f32(&base.tensors[k])))
            .collect();
        let mut failed: HashMap<Slot, DataError> = HashMap::new();
        for (k, r) in decoded {
            match r {
                Ok(v) => {
                    values.insert(Slot::F32(k), v);
                    stats.decoded += 1;
                }
                Err(e) => {
                    failed.insert(Slot::F32(k), e);
                }
            }
        }

        // 3. Encode: each new product once, and the outputs' own tensors.
        enum Task {
            Product(usize),
            Own(usize),
        }
        let tasks: Vec<Task> = new_products
            .iter()
            .map(|&p| Task::Product(p))
            .chain(
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, &(w, pos))| slot_of(w, pos).is_none())
                    .map(|(i, _)| Task::Own(i)),
            )
            .collect();
        let values_ref = &values;
        let products_ref = &products;
        let failed_ref = &failed;
        let done: Vec<Produced> = tasks
            .par_iter()
            .map(|task| {
                let t = Instant::now();
                let r = match task {
                    Task::Product(p) => {
                        let k = products_ref.key(*p);
                        match (failed_ref.get(&Slot::F32(k)), values_ref.get(Slot::F32(k))) {
                            (Some(e), _) => Err(e.clone()),
                            (None, Some(f)) => products_ref.compute(*p, f).map(Cow::Owned),
                            (None, None) => Err(DataError(format!(
                                "internal: f32 values of base tensor {k} missing"
                            ))),
                        }
                    }
                    Task::Own(i) => {
                        let (w, pos) = items[*i];
                        match &needs[w][pos] {
                            Need::Own(d) => d.bytes(),
                            Need::Shared(_) => unreachable!("own tasks only"),
                        }
                    }
                };
                (r, t.elapsed())
            })
            .collect();
        let mut own: HashMap<usize, Produced> = HashMap::new();
        let mut product_time: HashMap<usize, Duration> = HashMap::new();
        for (task, (r, d)) in tasks.iter().zip(done) {
            match task {
                Task::Own(i) => {
                    own.insert(*i, (r, d));
                }
                Task::Product(p) => {
                    product_time.insert(*p, d);
                    match r {
                        Ok(bytes) => {
                            // The product no longer needs its f32 value.
                            values.release(Slot::F32(products.key(*p)));
                            values.insert(
                                Slot::Product(*p),
                                TensorData::Owned(Arc::new(bytes.into_owned())),
                            );
                            stats.computed_products += 1;
                        }
                        Err(e) => {
                            failed.insert(Slot::Product(*p), e);
                        }
                    }
                }
            }
        }

        // 4. Write, each writer in its own order, writers in parallel.
        let mut per_writer: Vec<Vec<(usize, Produced)>> =
            (0..writers.len()).map(|_| Vec::new()).collect();
        for (i, &(w, pos)) in items.iter().enumerate() {
            let produced: Produced = match slot_of(w, pos) {
                None => own.remove(&i).expect("own task ran"),
                Some(s) => {
                    let r = match (failed.get(&s), values.get(s)) {
                        (Some(e), _) => Err(e.clone()),
                        (None, Some(v)) => v.bytes(),
                        (None, None) => Err(DataError(format!("internal: {s:?} missing"))),
                    };
                    let d = match s {
                        Slot::Product(p) => product_time.remove(&p).unwrap_or_default(),
                        Slot::F32(_) => Duration::ZERO,
                    };
                    (r, d)
                }
            };
            per_writer[w].push((pos, produced));
        }
        writers
            .par_iter_mut()
            .zip(per_writer.into_par_iter())
            .for_each(|(wr, work)| {
                for (pos, (r, d)) in work {
                    if !wr.active() {
                        break;
                    }
                    debug_assert_eq!(pos, wr.next);
                    wr.cpu += d;
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
        for (i, w) in writers.iter().enumerate() {
            if w.active() {
                hooks.progress(i, w.written);
            }
        }

        // 5. Release what was consumed; a failed writer releases everything it still owed.
        for &(w, pos) in &items {
            if let Some(s) = slot_of(w, pos) {
                release(&mut values, &products, s);
            }
        }
        for (w, wr) in writers.iter_mut().enumerate() {
            if !wr.active() && wr.next < wr.sizes.len() {
                for pos in cursor[w].max(wr.next)..wr.sizes.len() {
                    if let Some(s) = slot_of(w, pos) {
                        release(&mut values, &products, s);
                    }
                }
                // Nothing more is owed by this writer.
                wr.next = wr.sizes.len();
            }
        }
        stats.peak_cache_bytes = stats.peak_cache_bytes.max(values.peak_bytes());
        // Keep at most half the budget for values that wait for later users: evict those
        // needed furthest ahead.
        if values.held_bytes() > budget / 2 {
            let mut held: Vec<(Slot, usize)> = values
                .held_slots()
                .into_iter()
                .map(|(s, _)| {
                    let next_use = writers
                        .iter()
                        .enumerate()
                        .filter(|(_, wr)| wr.active())
                        .filter_map(|(w, wr)| {
                            let p = uses[w].get(&s)?;
                            let i = p.partition_point(|&x| x < wr.next);
                            p.get(i).map(|&x| x - wr.next)
                        })
                        .min()
                        .unwrap_or(usize::MAX);
                    (s, next_use)
                })
                .collect();
            held.sort_by_key(|&(s, next)| (std::cmp::Reverse(next), s));
            for (s, _) in held {
                if values.held_bytes() <= budget / 2 {
                    break;
                }
                if values.evict(s) {
                    stats.evictions += 1;
                    // The product must be computed again: it needs its f32 value again.
                    if let Slot::Product(p) = s {
                        values.add_uses(Slot::F32(products.key(p)), 1);
                    }
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
