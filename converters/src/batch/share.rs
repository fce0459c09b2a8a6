//! Sharing the f32 stage between the outputs of one source.
//!
//! Every output of a job is planned as if it were converted alone ([`super::plan`]), so its
//! tensors are lazy transforms that each start from the source: a quantized output's
//! tensors are [`Convert`]s of the base tensors (dequantize to f32, then quantize), a
//! HuggingFace plain outtype's are `Materialize`s (evaluate the tensor's expression, then
//! encode). Run naively, N outputs would read and convert every source tensor N times.
//!
//! [`rebase`] rewrites each output tensor into a [`Recipe`]: either
//!
//! * [`Recipe::Shared`]: "the f32 values of base tensor *k*, then [`Encode`]" — only when
//!   the original transform provably computes exactly that (same source object, or the
//!   same expression; the encoder is the very function the transform would call on those
//!   f32 values), so the bytes cannot differ from a single conversion; or
//! * [`Recipe::Own`]: the output's own lazy data, computed as in a single conversion
//!   (mapped copies, and the few transforms that do not go through f32, e.g. an F16
//!   expression written as F16).
//!
//! Two kinds of values are shared ([`Slot`]): the f32 values of a base tensor, and
//! *products*, encoded tensors that several outputs contain identically (the same base
//! tensor quantized to the same type with the same importance weights, see [`Products`]).
//! They live in [`SharedValues`], which counts each value's remaining uses and drops it
//! after the last one. The engine ([`super::engine`]) fills it a window at a time. f32
//! values of base tensors that are already f32 in a mapped file hold no memory: they are
//! the mapped bytes themselves.

use std::collections::HashMap;
use std::sync::Arc;

use ggufkit::ir::{Convert, DataError, Model, Tensor, TensorData};
use ggufkit::quantizers::GgmlType;

use crate::hf::expr::{self, Materialize, Work};

/// How an output tensor is made from shared f32 values.
#[derive(Clone)]
pub enum Encode {
    /// The f32 values as they are.
    AsF32,
    /// llama-quantize's conversion from f32 ([`Convert`] with an f32 input).
    Quantize {
        /// Target type.
        to: GgmlType,
        /// Row length.
        n_per_row: usize,
        /// Rows per matrix (the imatrix switches per matrix).
        rows_per_matrix: usize,
        /// Importance weights.
        imatrix: Option<Arc<Vec<f32>>>,
    },
    /// gguf-py's conversion of f32 values to a plain outtype (`quants.quantize`).
    HfPlain {
        /// Target type.
        to: GgmlType,
        /// Row length.
        n_per_row: usize,
    },
}

/// How one output tensor is produced.
#[derive(Clone)]
pub enum Recipe {
    /// The output's own lazy data, as in a single conversion.
    Own(TensorData),
    /// The f32 values of base tensor `key`, encoded.
    Shared {
        /// Index of the base tensor.
        key: usize,
        /// The encoding.
        encode: Encode,
    },
}

impl Recipe {
    /// The shared base tensor, if any.
    pub fn key(&self) -> Option<usize> {
        match self {
            Recipe::Shared { key, .. } => Some(*key),
            Recipe::Own(_) => None,
        }
    }
}

/// True when `a` and `b` are the same source object (the same mapped range, the same
/// in-memory bytes, the same transform).
fn same_data(a: &TensorData, b: &TensorData) -> bool {
    match (a, b) {
        (
            TensorData::Mapped {
                file: f1,
                offset: o1,
                len: l1,
            },
            TensorData::Mapped {
                file: f2,
                offset: o2,
                len: l2,
            },
        ) => Arc::ptr_eq(f1, f2) && o1 == o2 && l1 == l2,
        (TensorData::Owned(x), TensorData::Owned(y)) => Arc::ptr_eq(x, y),
        (TensorData::Derived(x), TensorData::Derived(y)) => {
            std::ptr::addr_eq(Arc::as_ptr(x), Arc::as_ptr(y))
        }
        _ => false,
    }
}

fn materialize(data: &TensorData) -> Option<&Materialize> {
    match data {
        TensorData::Derived(d) => d.as_any()?.downcast_ref::<Materialize>(),
        _ => None,
    }
}

fn convert(data: &TensorData) -> Option<&Convert> {
    match data {
        TensorData::Derived(d) => d.as_any()?.downcast_ref::<Convert>(),
        _ => None,
    }
}

/// True when the HF expression `e` (of an output of another outtype) computes the same
/// values as base tensor `b` (of the f32 conversion of the same source).
fn same_hf_values(e: &Materialize, b: &Tensor) -> bool {
    if b.ty != GgmlType::F32 {
        return false;
    }
    match &b.data {
        TensorData::Derived(_) => materialize(&b.data)
            .is_some_and(|bm| bm.out == GgmlType::F32 && bm.expr.same_values(&e.expr)),
        // The f32 conversion maps an F32 source tensor directly.
        TensorData::Mapped { file, offset, len } => e.expr.as_read().is_some_and(|r| {
            (Arc::ptr_eq(&r.file, file)
                || (r.file.path().is_some() && r.file.path() == file.path()))
                && r.offset == *offset
                && r.len == *len
                && r.dtype == crate::hf::safetensors::StDtype::F32
        }),
        TensorData::Owned(_) => false,
    }
}

/// Rewrites the tensors of `out` (an output planned from a source whose base model is
/// `base`) into recipes. See the module documentation for when a tensor is shared.
pub fn rebase(base: &Model, out: &Model) -> Vec<Recipe> {
    let by_name: HashMap<&str, usize> = base
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    out.tensors
        .iter()
        .map(|t| {
            let own = Recipe::Own(t.data.clone());
            let Some(&key) = by_name.get(t.name.as_str()) else {
                return own;
            };
            let b = &base.tensors[key];
            if b.dims != t.dims {
                return own;
            }
            // A copy of a base tensor.
            if same_data(&t.data, &b.data) {
                return match (&b.data, b.ty) {
                    (TensorData::Derived(_), GgmlType::F32) => Recipe::Shared {
                        key,
                        encode: Encode::AsF32,
                    },
                    _ => own,
                };
            }
            // The quantizer's conversion of a base tensor.
            if let Some(c) = convert(&t.data) {
                if same_data(&c.input, &b.data) && c.from == b.ty && c.to == t.ty {
                    return Recipe::Shared {
                        key,
                        encode: Encode::Quantize {
                            to: c.to,
                            n_per_row: c.n_per_row,
                            rows_per_matrix: c.rows_per_matrix,
                            imatrix: c.imatrix.clone(),
                        },
                    };
                }
                return own;
            }
            // A HuggingFace plain outtype: the same expression, encoded from f32 unless the
            // converter keeps the values in their own 16-bit type.
            if let Some(m) = materialize(&t.data) {
                let passthrough = matches!(
                    (m.expr.work(), m.out),
                    (Work::F16, GgmlType::F16) | (Work::Bf16, GgmlType::BF16)
                );
                if m.out == t.ty && !passthrough && same_hf_values(m, b) {
                    let n_per_row = m.expr.shape().last().copied().unwrap_or(1) as usize;
                    return Recipe::Shared {
                        key,
                        encode: if m.out == GgmlType::F32 {
                            Encode::AsF32
                        } else {
                            Encode::HfPlain {
                                to: m.out,
                                n_per_row,
                            }
                        },
                    };
                }
            }
            own
        })
        .collect()
}

/// The f32 values of base tensor `t`, exactly as a [`Convert`] from it would see them.
pub fn decode_f32(t: &Tensor) -> Result<TensorData, DataError> {
    if t.ty == GgmlType::F32 {
        return match &t.data {
            TensorData::Derived(d) => Ok(TensorData::Owned(Arc::new(d.compute()?))),
            other => Ok(other.clone()),
        };
    }
    let conv = Convert {
        input: t.data.clone(),
        from: t.ty,
        to: GgmlType::F32,
        n_per_row: t.dims.first().copied().unwrap_or(1) as usize,
        rows_per_matrix: t.dims.get(1).copied().unwrap_or(1) as usize,
        imatrix: None,
    };
    use ggufkit::ir::Derive;
    Ok(TensorData::Owned(Arc::new(conv.compute()?)))
}

/// A value the engine shares between outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// The f32 values of a base tensor.
    F32(usize),
    /// An encoded tensor: product `id` of a [`Products`] table.
    Product(usize),
}

/// True when two encodings give the same bytes from the same f32 values.
fn same_encode(a: &Encode, b: &Encode) -> bool {
    match (a, b) {
        (Encode::AsF32, Encode::AsF32) => true,
        (
            Encode::Quantize {
                to: t1,
                n_per_row: n1,
                rows_per_matrix: r1,
                imatrix: i1,
            },
            Encode::Quantize {
                to: t2,
                n_per_row: n2,
                rows_per_matrix: r2,
                imatrix: i2,
            },
        ) => {
            let same_im = match (i1, i2) {
                (None, None) => true,
                (Some(x), Some(y)) => {
                    Arc::ptr_eq(x, y)
                        || (x.len() == y.len()
                            && x.iter()
                                .zip(y.iter())
                                .all(|(p, q)| p.to_bits() == q.to_bits()))
                }
                _ => false,
            };
            t1 == t2 && n1 == n2 && r1 == r2 && same_im
        }
        (
            Encode::HfPlain {
                to: t1,
                n_per_row: n1,
            },
            Encode::HfPlain {
                to: t2,
                n_per_row: n2,
            },
        ) => t1 == t2 && n1 == n2,
        _ => false,
    }
}

/// The distinct encoded tensors of a job: two outputs that quantize the same base tensor
/// to the same type with the same importance weights (Q4_K_M and Q6_K both write
/// `output.weight` as Q6_K; Q4_K_S and Q4_K_M share most Q4_K tensors) get one product,
/// computed once — the quantizers are deterministic functions of exactly these inputs.
#[derive(Default)]
pub struct Products {
    items: Vec<(usize, Encode)>,
    by_key: HashMap<usize, Vec<usize>>,
}

impl Products {
    /// The product for `key` encoded with `encode` (interned).
    pub fn intern(&mut self, key: usize, encode: &Encode) -> usize {
        let ids = self.by_key.entry(key).or_default();
        if let Some(&id) = ids
            .iter()
            .find(|&&id| same_encode(&self.items[id].1, encode))
        {
            return id;
        }
        let id = self.items.len();
        self.items.push((key, encode.clone()));
        ids.push(id);
        id
    }

    /// The base tensor of product `id`.
    pub fn key(&self, id: usize) -> usize {
        self.items[id].0
    }

    /// Number of distinct products.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Computes product `id` from the f32 values of its base tensor.
    pub fn compute(&self, id: usize, f32: &TensorData) -> Result<Vec<u8>, DataError> {
        use ggufkit::ir::Derive;
        match &self.items[id].1 {
            Encode::AsF32 => Ok(f32.bytes()?.into_owned()),
            Encode::Quantize {
                to,
                n_per_row,
                rows_per_matrix,
                imatrix,
            } => Convert {
                input: f32.clone(),
                from: GgmlType::F32,
                to: *to,
                n_per_row: *n_per_row,
                rows_per_matrix: *rows_per_matrix,
                imatrix: imatrix.clone(),
            }
            .compute(),
            Encode::HfPlain { to, n_per_row } => {
                let raw = f32.bytes()?;
                let floats: Vec<f32> = raw
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                expr::encode_f32(&floats, *to, *n_per_row)
            }
        }
    }
}

/// What an output tensor needs: its own data, or a shared value.
pub enum Need<'a> {
    /// Computed from the output's own lazy data.
    Own(&'a TensorData),
    /// A shared value (an f32 value written as it is, or a product).
    Shared(Slot),
}

/// Resolves recipes into needs, interning products.
pub fn needs<'a>(recipes: &'a [Recipe], products: &mut Products) -> Vec<Need<'a>> {
    recipes
        .iter()
        .map(|r| match r {
            Recipe::Own(d) => Need::Own(d),
            Recipe::Shared {
                key,
                encode: Encode::AsF32,
            } => Need::Shared(Slot::F32(*key)),
            Recipe::Shared { key, encode } => {
                Need::Shared(Slot::Product(products.intern(*key, encode)))
            }
        })
        .collect()
}

struct Entry {
    value: Option<TensorData>,
    /// Uses not yet consumed.
    remaining: usize,
    /// Memory held by the value (0 for mapped bytes).
    bytes: u64,
}

/// Shared values with use counts: f32 values of base tensors and encoded products.
///
/// Each slot counts its remaining uses ([`SharedValues::add_uses`]). [`SharedValues::insert`]
/// stores a value, [`SharedValues::release`] consumes one use and drops the value after
/// the last one. [`SharedValues::evict`] drops a value early when memory is short; it is
/// computed again when next needed (same bytes: every computation is deterministic).
#[derive(Default)]
pub struct SharedValues {
    entries: HashMap<Slot, Entry>,
    held: u64,
    peak: u64,
}

impl SharedValues {
    /// Adds `n` expected uses of `slot`.
    pub fn add_uses(&mut self, slot: Slot, n: usize) {
        self.entries
            .entry(slot)
            .or_insert(Entry {
                value: None,
                remaining: 0,
                bytes: 0,
            })
            .remaining += n;
    }

    /// The value of `slot`, when held.
    pub fn get(&self, slot: Slot) -> Option<&TensorData> {
        self.entries.get(&slot)?.value.as_ref()
    }

    /// True when `slot` has a value.
    pub fn contains(&self, slot: Slot) -> bool {
        self.get(slot).is_some()
    }

    /// Stores the value of `slot` (ignored when no use remains).
    pub fn insert(&mut self, slot: Slot, value: TensorData) {
        let bytes = match &value {
            TensorData::Owned(v) => v.len() as u64,
            _ => 0,
        };
        if let Some(e) = self.entries.get_mut(&slot) {
            if e.remaining == 0 {
                return;
            }
            if let Some(old) = e.value.take() {
                drop(old);
                self.held -= e.bytes;
            }
            self.held += bytes;
            e.bytes = bytes;
            e.value = Some(value);
            self.peak = self.peak.max(self.held);
        }
    }

    /// Consumes one use of `slot`; returns true when that was the last one and no value
    /// was held (a product that was never computed).
    pub fn release(&mut self, slot: Slot) -> bool {
        let Some(e) = self.entries.get_mut(&slot) else {
            return false;
        };
        e.remaining = e.remaining.saturating_sub(1);
        if e.remaining > 0 {
            return false;
        }
        match e.value.take() {
            Some(_) => {
                self.held -= e.bytes;
                false
            }
            None => true,
        }
    }

    /// Drops the value of `slot`; returns true when one was held and uses remain.
    pub fn evict(&mut self, slot: Slot) -> bool {
        match self.entries.get_mut(&slot) {
            Some(e) if e.value.is_some() => {
                e.value = None;
                self.held -= e.bytes;
                e.remaining > 0
            }
            _ => false,
        }
    }

    /// Held slots with their sizes, in slot order.
    pub fn held_slots(&self) -> Vec<(Slot, u64)> {
        let mut v: Vec<(Slot, u64)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.value.is_some())
            .map(|(k, e)| (*k, e.bytes))
            .collect();
        v.sort_unstable();
        v
    }

    /// Bytes held now.
    pub fn held_bytes(&self) -> u64 {
        self.held
    }

    /// Most bytes held at once.
    pub fn peak_bytes(&self) -> u64 {
        self.peak
    }

    /// Uses of `slot` not yet consumed.
    pub fn remaining(&self, slot: Slot) -> usize {
        self.entries.get(&slot).map_or(0, |e| e.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_dropped_after_their_last_use() {
        let mut c = SharedValues::default();
        c.add_uses(Slot::F32(3), 2);
        c.insert(Slot::F32(3), TensorData::Owned(Arc::new(vec![0; 16])));
        assert_eq!(c.held_bytes(), 16);
        assert!(!c.release(Slot::F32(3)));
        assert!(c.contains(Slot::F32(3)));
        assert!(!c.release(Slot::F32(3)));
        assert!(!c.contains(Slot::F32(3)));
        assert_eq!((c.held_bytes(), c.peak_bytes()), (0, 16));
        // A product never computed reports its last release.
        c.add_uses(Slot::Product(0), 1);
        assert!(c.release(Slot::Product(0)));
    }

    #[test]
    fn equal_encodings_are_one_product() {
        let q = |to, im: Option<Vec<f32>>| Encode::Quantize {
            to,
            n_per_row: 32,
            rows_per_matrix: 4,
            imatrix: im.map(Arc::new),
        };
        let mut p = Products::default();
        let a = p.intern(1, &q(GgmlType::Q6_K, None));
        assert_eq!(p.intern(1, &q(GgmlType::Q6_K, None)), a);
        assert_ne!(p.intern(2, &q(GgmlType::Q6_K, None)), a);
        assert_ne!(p.intern(1, &q(GgmlType::Q4_K, None)), a);
        let b = p.intern(1, &q(GgmlType::Q6_K, Some(vec![1.0; 32])));
        assert_ne!(b, a);
        assert_eq!(p.intern(1, &q(GgmlType::Q6_K, Some(vec![1.0; 32]))), b);
        assert_eq!(p.len(), 4);
    }
}
