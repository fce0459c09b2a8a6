//! Several outputs written together, one *window* at a time.
//!
//! Each output is a *slot*: its files ([`Files`]), its tensors' needs in output order — a
//! *product* (an encoding of a shared f32 stage, see [`Products`]) or its own lazy data —
//! and a cursor. Every window:
//!
//! 1. **Select** the next tensors of the outputs within the memory budget: the bytes the
//!    window will produce plus the products already waiting must fit. Tensors whose product
//!    is already computed go first (that drains the waiting products); otherwise the output
//!    furthest behind goes next, so outputs whose tensor orders differ (llama-quantize's
//!    block-then-name order against a converter's order) stay close and a product rarely
//!    waits long. Needing a product schedules every pending product of its stage. A window
//!    always takes at least one tensor, so a tensor larger than the budget is still written.
//! 2. **Compute**, in parallel: for each scheduled stage, one read and one f32 conversion,
//!    slab by slab, feeding all of its products ([`compute_products`]); and the outputs' own
//!    tensors.
//! 3. **Write** each output's tensors in its own order (outputs in parallel, each file
//!    sequentially).
//! 4. **Release** the consumed uses: a product is dropped after its last use. If the
//!    products still waiting exceed half the budget, those needed furthest ahead are evicted
//!    (and computed again when their turn comes: bounded memory, same bytes).
//!
//! No thread waits for another inside a parallel section (the phases are separate), and
//! every computation is deterministic, so the files do not depend on the thread count. An
//! output that fails is dropped — its temporary files removed — and the others go on. An
//! output that has written its last tensor is committed at once (all of its shards
//! together).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use rayon::prelude::*;

use super::products::{compute_products, f32_cost, Products, SharedValues};
use super::writer::Files;
use super::{ExecuteOptions, Observer, OutputPlan, PipelineError, Stats, WrittenOutput};
use crate::ir::{DataError, Tensor};

/// One output being written.
struct Slot<'p> {
    /// Its files; `None` once it failed to open.
    files: Option<Files>,
    /// Its tensors in order.
    tensors: Vec<&'p Tensor>,
    /// Per tensor: its product, or `None` for its own data.
    needs: Vec<Option<usize>>,
    /// Per tensor: its data size.
    sizes: Vec<u64>,
    /// Per product: the positions that use it (for eviction decisions).
    uses: HashMap<usize, Vec<usize>>,
    /// The next tensor to write.
    next: usize,
    /// Tensor data bytes written.
    written: u64,
    result: Option<Result<WrittenOutput, PipelineError>>,
}

impl Slot<'_> {
    fn active(&self) -> bool {
        self.result.is_none()
    }

    /// Active and every tensor written: the output can be committed.
    fn complete(&self) -> bool {
        self.active() && self.next == self.sizes.len()
    }

    fn fail(&mut self, e: PipelineError) {
        if let Some(f) = &mut self.files {
            f.abandon();
        }
        self.result = Some(Err(e));
    }
}

/// The tensors of one window: (output, position), and the stages to read for them.
struct Window {
    items: Vec<(usize, usize)>,
    groups: BTreeSet<usize>,
    scheduled: BTreeSet<usize>,
    cost: u64,
}

/// What a window computed for the outputs' own tensors (by item) and which products failed.
type Computed<'p> = (
    HashMap<usize, Result<Cow<'p, [u8]>, DataError>>,
    HashMap<usize, DataError>,
);

struct Joint<'p> {
    slots: Vec<Slot<'p>>,
    products: Products,
    values: SharedValues,
    product_size: HashMap<usize, u64>,
    budget: u64,
    stats: Stats,
    t0: Instant,
}

/// Writes `plans` together (see the module documentation).
pub fn write(
    plans: &[OutputPlan],
    opts: &ExecuteOptions,
    t0: Instant,
    observer: &dyn Observer,
) -> (Vec<Result<WrittenOutput, PipelineError>>, Stats) {
    let mut j = Joint::new(plans, opts.budget.max(1), t0, observer);
    loop {
        j.commit_complete(observer);
        if !j.slots.iter().any(Slot::active) {
            break;
        }
        let Some(window) = j.select() else {
            break;
        };
        j.stats.windows += 1;
        j.stats.peak_window_bytes = j.stats.peak_window_bytes.max(window.cost);
        let data_phase = crate::timing::phase("write: tensor data");
        let computed = j.compute(&window);
        j.write_window(&window, computed, observer);
        j.release(&window);
        j.evict();
        drop(data_phase);
    }
    j.finish()
}

/// Per output, the products of its tensors (interned into `products`).
fn intern_all(plans: &[OutputPlan], products: &mut Products) -> Vec<Vec<Option<usize>>> {
    plans
        .iter()
        .map(|p| p.tensors().map(|t| products.intern(t)).collect())
        .collect()
}

/// See [`super::minimum_budget`].
pub fn minimum_budget(plans: &[OutputPlan]) -> u64 {
    let mut products = Products::default();
    intern_all(plans, &mut products);
    let f32_max = (0..products.n_groups())
        .map(|g| f32_cost(products.group(g)))
        .max()
        .unwrap_or(0);
    let out_max: u64 = plans
        .iter()
        .map(|o| o.tensors().map(nbytes).max().unwrap_or(0))
        .sum();
    f32_max + out_max
}

fn nbytes(t: &Tensor) -> u64 {
    crate::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0)
}

impl<'p> Joint<'p> {
    fn new(plans: &'p [OutputPlan], budget: u64, t0: Instant, observer: &dyn Observer) -> Self {
        let mut products = Products::default();
        let needs = intern_all(plans, &mut products);
        let mut values = SharedValues::default();
        let mut product_size: HashMap<usize, u64> = HashMap::new();
        let mut product_uses: HashMap<usize, usize> = HashMap::new();
        let mut slots = Vec::with_capacity(plans.len());
        for (w, (plan, needs)) in plans.iter().zip(needs).enumerate() {
            let tensors: Vec<&Tensor> = plan.tensors().collect();
            let sizes: Vec<u64> = tensors.iter().map(|t| nbytes(t)).collect();
            let mut uses: HashMap<usize, Vec<usize>> = HashMap::new();
            for (pos, p) in needs.iter().enumerate() {
                if let Some(p) = p {
                    uses.entry(*p).or_default().push(pos);
                }
            }
            let opened = Files::plan(plan).and_then(|f| {
                if f.sizes.len() == tensors.len() {
                    Ok(f)
                } else {
                    Err(PipelineError::Internal(format!(
                        "{} tensors laid out for {} planned",
                        f.sizes.len(),
                        tensors.len()
                    )))
                }
            });
            let mut slot = Slot {
                files: None,
                tensors,
                needs,
                sizes,
                uses,
                next: 0,
                written: 0,
                result: None,
            };
            for (pos, p) in slot.needs.iter().enumerate() {
                if let Some(p) = p {
                    *product_uses.entry(*p).or_default() += 1;
                    product_size.insert(*p, slot.sizes[pos]);
                }
            }
            match opened {
                Ok(f) => {
                    slot.files = Some(f);
                    observer.output_started(w);
                }
                Err(e) => slot.fail(e),
            }
            slots.push(slot);
        }
        for (&p, &n) in &product_uses {
            values.add_uses(p, n);
        }
        // An output that could not be opened owes nothing.
        for slot in slots.iter_mut().filter(|s| s.files.is_none()) {
            for p in slot.needs.iter().flatten() {
                values.release(*p);
            }
            slot.next = slot.sizes.len();
        }
        let stats = Stats {
            shared_keys: product_uses
                .keys()
                .map(|p| products.group_of(*p))
                .collect::<BTreeSet<_>>()
                .len() as u64,
            products: products.len() as u64,
            product_uses: product_uses.values().map(|n| *n as u64).sum(),
            ..Default::default()
        };
        Joint {
            slots,
            products,
            values,
            product_size,
            budget,
            stats,
            t0,
        }
    }

    /// Commits the outputs that have written everything (in parallel: each commit syncs
    /// its files to disk).
    fn commit_complete(&mut self, observer: &dyn Observer) {
        if !self.slots.iter().any(Slot::complete) {
            return;
        }
        let _commit = crate::timing::phase("write: sync and commit");
        let t0 = self.t0;
        self.slots.par_iter_mut().enumerate().for_each(|(i, s)| {
            if s.complete() {
                let files = s.files.as_mut().expect("an active output has files");
                match files.commit(i, t0, observer) {
                    Ok(done) => s.result = Some(Ok(done)),
                    Err(e) => s.fail(e),
                }
            }
        });
    }

    /// What making product `p` now would add to the window: every pending product of its
    /// stage not yet held.
    fn pending_cost(&self, p: usize) -> u64 {
        self.pending_of_group(self.products.group_of(p))
            .map(|q| self.product_size.get(&q).copied().unwrap_or(0))
            .sum()
    }

    /// The products of group `g` that are still needed and not held.
    fn pending_of_group(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        self.products
            .of_group(g)
            .iter()
            .copied()
            .filter(|&q| self.values.remaining(q) > 0 && !self.values.contains(q))
    }

    /// Step 1: the next window. Scheduling a product schedules every pending product of its
    /// stage: the values are read once for all of them.
    fn select(&self) -> Option<Window> {
        let mut cursor: Vec<usize> = self.slots.iter().map(|s| s.next).collect();
        let mut win = Window {
            items: Vec::new(),
            groups: BTreeSet::new(),
            scheduled: BTreeSet::new(),
            cost: 0,
        };
        let held = self.values.held_bytes();
        loop {
            // (free, progress, output, cost)
            let mut best: Option<(bool, f64, usize, u64)> = None;
            for (w, s) in self.slots.iter().enumerate() {
                if !s.active() || cursor[w] >= s.sizes.len() {
                    continue;
                }
                let pos = cursor[w];
                let (free, c) = match s.needs[pos] {
                    None => (false, s.sizes[pos]),
                    Some(p) if self.values.contains(p) || win.scheduled.contains(&p) => (true, 0),
                    Some(p) => (false, self.pending_cost(p)),
                };
                let frac = pos as f64 / s.sizes.len().max(1) as f64;
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
            if !win.items.is_empty() && held + win.cost + c > self.budget {
                break;
            }
            let pos = cursor[w];
            win.items.push((w, pos));
            cursor[w] += 1;
            win.cost += c;
            if let Some(p) = self.slots[w].needs[pos] {
                if !self.values.contains(p) && !win.scheduled.contains(&p) {
                    let g = self.products.group_of(p);
                    win.groups.insert(g);
                    let pending: Vec<usize> = self.pending_of_group(g).collect();
                    win.scheduled.extend(pending);
                }
            }
        }
        (!win.items.is_empty()).then_some(win)
    }

    /// Step 2: computes, in parallel, every scheduled product (one read of each stage for
    /// all its products) and the outputs' own tensors of the window.
    fn compute(&mut self, win: &Window) -> Computed<'p> {
        enum Task {
            Group(usize),
            Own(usize),
        }
        /// Per product its bytes; or the products that failed, and why.
        type Made = Result<Vec<(usize, Vec<u8>)>, (Vec<usize>, DataError)>;
        enum Done<'a> {
            Group(Made),
            Own(usize, Result<Cow<'a, [u8]>, DataError>),
        }
        let slots = &self.slots;
        let tasks: Vec<Task> = win
            .groups
            .iter()
            .map(|&g| Task::Group(g))
            .chain(
                win.items
                    .iter()
                    .enumerate()
                    .filter(|(_, &(w, pos))| slots[w].needs[pos].is_none())
                    .map(|(i, _)| Task::Own(i)),
            )
            .collect();
        let products = &self.products;
        let done: Vec<Done<'p>> = tasks
            .par_iter()
            .map(|task| match task {
                Task::Group(g) => {
                    let ids: Vec<usize> = products
                        .of_group(*g)
                        .iter()
                        .copied()
                        .filter(|q| win.scheduled.contains(q))
                        .collect();
                    let encodes: Vec<_> = ids.iter().map(|&q| products.encode(q)).collect();
                    let stage = &products.group(*g).stage;
                    let r = compute_products(stage, &encodes);
                    // Every pending product of this stage is made: its input pages can go.
                    stage.values.release();
                    Done::Group(match r {
                        Ok(bytes) => Ok(ids.into_iter().zip(bytes).collect()),
                        Err(e) => Err((ids, e)),
                    })
                }
                Task::Own(i) => {
                    let (w, pos) = win.items[*i];
                    let t: &'p Tensor = slots[w].tensors[pos];
                    Done::Own(*i, t.data.bytes())
                }
            })
            .collect();
        let mut own = HashMap::new();
        let mut failed = HashMap::new();
        for d in done {
            match d {
                Done::Own(i, r) => {
                    own.insert(i, r);
                }
                Done::Group(Ok(v)) => {
                    self.stats.decoded += 1;
                    for (p, bytes) in v {
                        self.values.insert(p, bytes);
                        self.stats.computed_products += 1;
                    }
                }
                Done::Group(Err((ids, e))) => {
                    for p in ids {
                        failed.insert(p, e.clone());
                    }
                }
            }
        }
        (own, failed)
    }

    /// Step 3: writes the window, each output in its own order, outputs in parallel.
    fn write_window(&mut self, win: &Window, computed: Computed<'p>, observer: &dyn Observer) {
        let (mut own, failed) = computed;
        type Bytes<'a> = Result<Cow<'a, [u8]>, DataError>;
        let mut per_slot: Vec<Vec<(usize, Bytes)>> =
            (0..self.slots.len()).map(|_| Vec::new()).collect();
        for (i, &(w, pos)) in win.items.iter().enumerate() {
            let r = match self.slots[w].needs[pos] {
                None => own
                    .remove(&i)
                    .unwrap_or_else(|| Err(DataError("internal: own tensor not computed".into()))),
                Some(p) => match (failed.get(&p), self.values.get(p)) {
                    (Some(e), _) => Err(e.clone()),
                    (None, Some(v)) => Ok(Cow::Borrowed(v.as_slice())),
                    (None, None) => Err(DataError(format!("internal: product {p} missing"))),
                },
            };
            per_slot[w].push((pos, r));
        }
        self.slots
            .par_iter_mut()
            .zip(per_slot.into_par_iter())
            .for_each(|(slot, work)| {
                for (pos, r) in work {
                    if !slot.active() {
                        break;
                    }
                    debug_assert_eq!(pos, slot.next);
                    let files = slot.files.as_mut().expect("an active output has files");
                    let res = r
                        .map_err(|error| PipelineError::Data {
                            tensor: files.names[pos].clone(),
                            error,
                        })
                        .and_then(|data| {
                            files.write(pos, &data)?;
                            Ok(data.len() as u64)
                        });
                    match res {
                        Ok(n) => {
                            slot.next += 1;
                            slot.written += n;
                        }
                        Err(e) => slot.fail(e),
                    }
                }
            });
        // The outputs' own inputs are not needed again (a later reader faults pages back).
        for &(w, pos) in &win.items {
            if self.slots[w].needs[pos].is_none() {
                self.slots[w].tensors[pos].data.release();
            }
        }
        // Progress once a window, for the last tensor each output has written.
        for (w, s) in self.slots.iter().enumerate() {
            if s.active() && s.next > 0 {
                observer.tensor_written(w, s.next - 1, s.written);
            }
        }
    }

    /// Step 4a: consumes the window's uses; a failed output releases everything it still
    /// owed.
    fn release(&mut self, win: &Window) {
        for &(w, pos) in &win.items {
            if let Some(p) = self.slots[w].needs[pos] {
                self.values.release(p);
            }
        }
        let mut cursor: Vec<usize> = self.slots.iter().map(|s| s.next).collect();
        for &(w, pos) in &win.items {
            cursor[w] = cursor[w].max(pos + 1);
        }
        for (w, slot) in self.slots.iter_mut().enumerate() {
            if !slot.active() && slot.next < slot.sizes.len() {
                for pos in cursor[w].max(slot.next)..slot.sizes.len() {
                    if let Some(p) = slot.needs[pos] {
                        self.values.release(p);
                    }
                }
                // Nothing more is owed by this output.
                slot.next = slot.sizes.len();
            }
        }
        self.stats.peak_cache_bytes = self.stats.peak_cache_bytes.max(self.values.peak_bytes());
    }

    /// Step 4b: keeps at most half the budget for products that wait for later outputs,
    /// evicting those needed furthest ahead.
    fn evict(&mut self) {
        if self.values.held_bytes() <= self.budget / 2 {
            return;
        }
        let mut held: Vec<(usize, usize)> = self
            .values
            .held()
            .into_iter()
            .map(|(p, _)| {
                let next_use = self
                    .slots
                    .iter()
                    .filter(|s| s.active())
                    .filter_map(|s| {
                        let u = s.uses.get(&p)?;
                        let i = u.partition_point(|&x| x < s.next);
                        u.get(i).map(|&x| x - s.next)
                    })
                    .min()
                    .unwrap_or(usize::MAX);
                (p, next_use)
            })
            .collect();
        held.sort_by_key(|&(p, next)| (std::cmp::Reverse(next), p));
        for (p, _) in held {
            if self.values.held_bytes() <= self.budget / 2 {
                break;
            }
            if self.values.evict(p) {
                self.stats.evictions += 1;
            }
        }
    }

    fn finish(mut self) -> (Vec<Result<WrittenOutput, PipelineError>>, Stats) {
        self.stats.peak_cache_bytes = self.stats.peak_cache_bytes.max(self.values.peak_bytes());
        let results = self
            .slots
            .into_iter()
            .map(|s| {
                s.result.unwrap_or_else(|| {
                    Err(PipelineError::Internal("output left unfinished".into()))
                })
            })
            .collect();
        (results, self.stats)
    }
}
