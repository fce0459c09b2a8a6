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
//! The f32 values live in an [`F32Cache`] keyed by base tensor index. The engine
//! ([`super::engine`]) fills it for a window of tensors, lets every output consume its
//! entries, and drops an entry as soon as its last consumer has used it (each entry counts
//! its remaining uses; see [`F32Cache::release`]). Entries of base tensors that are
//! already f32 in a mapped file hold no memory: they are the mapped bytes themselves.

use std::borrow::Cow;
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

/// Produces an output tensor's bytes from its recipe, reading shared values from `cache`.
pub fn produce<'a>(recipe: &'a Recipe, cache: &'a F32Cache) -> Result<Cow<'a, [u8]>, DataError> {
    match recipe {
        Recipe::Own(d) => d.bytes(),
        Recipe::Shared { key, encode } => {
            let f = cache
                .get(*key)
                .ok_or_else(|| DataError(format!("internal: base tensor {key} is not cached")))?;
            match encode {
                Encode::AsF32 => f.bytes(),
                Encode::Quantize {
                    to,
                    n_per_row,
                    rows_per_matrix,
                    imatrix,
                } => {
                    use ggufkit::ir::Derive;
                    let conv = Convert {
                        input: f.clone(),
                        from: GgmlType::F32,
                        to: *to,
                        n_per_row: *n_per_row,
                        rows_per_matrix: *rows_per_matrix,
                        imatrix: imatrix.clone(),
                    };
                    conv.compute().map(Cow::Owned)
                }
                Encode::HfPlain { to, n_per_row } => {
                    let raw = f.bytes()?;
                    let floats: Vec<f32> = raw
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                    expr::encode_f32(&floats, *to, *n_per_row).map(Cow::Owned)
                }
            }
        }
    }
}

struct Entry {
    value: Option<TensorData>,
    /// Uses not yet consumed.
    remaining: usize,
    /// Memory held by the value (0 for mapped bytes).
    bytes: u64,
}

/// The shared per-source-tensor f32 values of one job, with use counts.
///
/// Built with the total number of uses of each key (every output tensor whose recipe is
/// [`Recipe::Shared`] on it). [`F32Cache::insert`] stores a value, [`F32Cache::release`]
/// counts one use as consumed and drops the value after the last one. [`F32Cache::evict`]
/// drops a value early when memory is short; a later consumer finds it missing and the
/// engine computes it again (same bytes: the computation is deterministic).
pub struct F32Cache {
    entries: HashMap<usize, Entry>,
    held: u64,
    peak: u64,
    computed: u64,
}

impl F32Cache {
    /// A cache for these recipes (all outputs of one job).
    pub fn new<'a>(recipes: impl IntoIterator<Item = &'a Recipe>) -> F32Cache {
        let mut entries: HashMap<usize, Entry> = HashMap::new();
        for k in recipes.into_iter().filter_map(Recipe::key) {
            entries
                .entry(k)
                .or_insert(Entry {
                    value: None,
                    remaining: 0,
                    bytes: 0,
                })
                .remaining += 1;
        }
        F32Cache {
            entries,
            held: 0,
            peak: 0,
            computed: 0,
        }
    }

    /// The value of `key`, when present.
    pub fn get(&self, key: usize) -> Option<&TensorData> {
        self.entries.get(&key)?.value.as_ref()
    }

    /// True when `key` has a value.
    pub fn contains(&self, key: usize) -> bool {
        self.get(key).is_some()
    }

    /// Stores the value of `key`.
    pub fn insert(&mut self, key: usize, value: TensorData) {
        let bytes = match &value {
            TensorData::Owned(v) => v.len() as u64,
            _ => 0,
        };
        self.computed += 1;
        if let Some(e) = self.entries.get_mut(&key) {
            if e.remaining == 0 {
                return;
            }
            if e.value.is_none() {
                self.held += bytes;
                e.bytes = bytes;
            }
            e.value = Some(value);
            self.peak = self.peak.max(self.held);
        }
    }

    /// Counts one use of `key` as consumed; the value is dropped after its last use.
    pub fn release(&mut self, key: usize) {
        if let Some(e) = self.entries.get_mut(&key) {
            e.remaining = e.remaining.saturating_sub(1);
            if e.remaining == 0 && e.value.take().is_some() {
                self.held -= e.bytes;
            }
        }
    }

    /// Drops the value of `key` (it will be computed again if still needed).
    pub fn evict(&mut self, key: usize) {
        if let Some(e) = self.entries.get_mut(&key) {
            if e.value.take().is_some() {
                self.held -= e.bytes;
            }
        }
    }

    /// Keys whose values are held, with their sizes.
    pub fn held_keys(&self) -> Vec<(usize, u64)> {
        let mut v: Vec<(usize, u64)> = self
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

    /// How many values were computed (more than the number of keys only after evictions).
    pub fn computed(&self) -> u64 {
        self.computed
    }

    /// Uses of `key` not yet consumed.
    pub fn remaining(&self, key: usize) -> usize {
        self.entries.get(&key).map_or(0, |e| e.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_dropped_after_their_last_use() {
        let r = [
            Recipe::Shared {
                key: 3,
                encode: Encode::AsF32,
            },
            Recipe::Shared {
                key: 3,
                encode: Encode::AsF32,
            },
            Recipe::Own(TensorData::Owned(Arc::new(vec![]))),
        ];
        let mut c = F32Cache::new(&r);
        assert_eq!(c.remaining(3), 2);
        c.insert(3, TensorData::Owned(Arc::new(vec![0; 16])));
        assert_eq!(c.held_bytes(), 16);
        c.release(3);
        assert!(c.contains(3));
        c.release(3);
        assert!(!c.contains(3));
        assert_eq!((c.held_bytes(), c.peak_bytes()), (0, 16));
    }
}
