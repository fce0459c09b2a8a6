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
//! Recipes that encode the same base tensor the same way are one *product* ([`Products`]).
//! The engine ([`super::engine`]) computes all pending products of a base tensor together
//! with [`compute_products`]: the tensor is read and converted to f32 once, slab by slab,
//! and every product is encoded from each slab. Computed products wait in
//! [`SharedValues`] for the outputs that have not written them yet, each dropped after its
//! last use.

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

/// The distinct encoded tensors (*products*) of a job. Two outputs that encode the same
/// base tensor the same way (Q4_K_M and Q6_K both write `output.weight` as Q6_K; Q4_K_S
/// and Q4_K_M share most Q4_K tensors; norms are f32 everywhere) get one product,
/// computed once — the quantizers are deterministic functions of exactly these inputs.
#[derive(Default)]
pub struct Products {
    items: Vec<(usize, Encode)>,
    by_key: HashMap<usize, Vec<usize>>,
}

impl Products {
    /// The product for base tensor `key` encoded with `encode` (interned).
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

    /// The encoding of product `id`.
    pub fn encode(&self, id: usize) -> &Encode {
        &self.items[id].1
    }

    /// The products of base tensor `key`.
    pub fn of_key(&self, key: usize) -> &[usize] {
        self.by_key.get(&key).map_or(&[], Vec::as_slice)
    }

    /// Number of distinct products.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// What an output tensor needs: its own data, or a product.
pub enum Need<'a> {
    /// Computed from the output's own lazy data.
    Own(&'a TensorData),
    /// A product (see [`Products`]).
    Product(usize),
}

/// Resolves recipes into needs, interning products.
pub fn needs<'a>(recipes: &'a [Recipe], products: &mut Products) -> Vec<Need<'a>> {
    recipes
        .iter()
        .map(|r| match r {
            Recipe::Own(d) => Need::Own(d),
            Recipe::Shared { key, encode } => Need::Product(products.intern(*key, encode)),
        })
        .collect()
}

fn out_row(e: &Encode, n_per_row: usize) -> Option<usize> {
    match e {
        Encode::AsF32 => Some(4 * n_per_row),
        Encode::Quantize { to, .. } | Encode::HfPlain { to, .. } => {
            ggufkit::quantizers::row_size(*to, n_per_row)
        }
    }
}

/// Reads base tensor `t` once and produces every encoding in `encodes` from it.
///
/// The tensor is converted to f32 in slabs of whole rows (about 4 Mi values, never across a
/// matrix boundary) and each slab is encoded for every product before the next is read, so
/// the f32 values of a tensor never exist whole (for a HuggingFace source, whose transforms
/// produce whole tensors, the f32 tensor itself is the one big buffer, as in a single
/// conversion). This is [`Convert::compute`] with one input and several outputs: the same
/// slabs, the same decoding, the same per-matrix importance weights, and row-wise
/// quantizers, so each product equals what the output's own transform computes.
pub fn compute_products(t: &Tensor, encodes: &[&Encode]) -> Result<Vec<Vec<u8>>, DataError> {
    // A HuggingFace tensor converted to f32 is its expression's values widened element by
    // element (`finish`): take the values in their working type (half the bytes for a
    // 16-bit model) and widen them slab by slab instead of materialising the f32 tensor.
    if let Some(m) = materialize(&t.data).filter(|m| m.out == GgmlType::F32) {
        if t.ty == GgmlType::F32 {
            let v = m.expr.eval()?;
            return compute_from(t, &v.bytes, Elem::Work(v.work), encodes);
        }
    }
    compute_from(t, &t.data.bytes()?, Elem::Ggml(t.ty), encodes)
}

/// How the elements of a source buffer are stored.
#[derive(Clone, Copy)]
enum Elem {
    /// A GGML type (F32, F16, BF16 or a block type).
    Ggml(GgmlType),
    /// An HF expression's working type.
    Work(Work),
}

fn compute_from(
    t: &Tensor,
    raw: &[u8],
    elem: Elem,
    encodes: &[&Encode],
) -> Result<Vec<Vec<u8>>, DataError> {
    let n_per_row = t.dims.first().copied().unwrap_or(1).max(1) as usize;
    let rows_per_matrix = t.dims.get(1).copied().unwrap_or(1).max(1) as usize;
    let in_ty = match elem {
        Elem::Ggml(ty) => ty,
        Elem::Work(Work::F32) => GgmlType::F32,
        Elem::Work(Work::F16) => GgmlType::F16,
        Elem::Work(Work::Bf16) => GgmlType::BF16,
    };
    let in_row = ggufkit::quantizers::row_size(in_ty, n_per_row)
        .filter(|r| *r > 0 && raw.len().is_multiple_of(*r))
        .ok_or_else(|| {
            DataError(format!(
                "{} bytes is not a whole number of {n_per_row}-element {in_ty} rows",
                raw.len()
            ))
        })?;
    let rows = raw.len() / in_row;
    let rows_out: Vec<usize> = encodes
        .iter()
        .map(|e| {
            out_row(e, n_per_row).ok_or_else(|| {
                DataError(format!(
                    "row length {n_per_row} does not fit the output type"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    let mut outs: Vec<Vec<u8>> = rows_out.iter().map(|r| vec![0u8; rows * r]).collect();
    let slab_rows = ((4 << 20) / n_per_row).clamp(1, rows_per_matrix);
    let mut floats = vec![0f32; slab_rows.min(rows.max(1)) * n_per_row];
    let mut r0 = 0;
    while r0 < rows {
        let matrix = r0 / rows_per_matrix;
        let r1 = (r0 + slab_rows)
            .min(rows)
            .min((matrix + 1) * rows_per_matrix);
        let src = &raw[r0 * in_row..r1 * in_row];
        let f = &mut floats[..(r1 - r0) * n_per_row];
        match elem {
            Elem::Ggml(GgmlType::F32) | Elem::Work(Work::F32) => {
                for (v, c) in f.iter_mut().zip(src.chunks_exact(4)) {
                    *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
            }
            Elem::Work(Work::F16) => {
                for (v, c) in f.iter_mut().zip(src.chunks_exact(2)) {
                    *v = ggufkit::quantizers::f16_to_f32(u16::from_le_bytes([c[0], c[1]]));
                }
            }
            Elem::Work(Work::Bf16) => {
                for (v, c) in f.iter_mut().zip(src.chunks_exact(2)) {
                    *v = ggufkit::quantizers::bf16_to_f32(u16::from_le_bytes([c[0], c[1]]));
                }
            }
            Elem::Ggml(ty) => ggufkit::quantizers::dequantize_rows(ty, src, f)
                .map_err(|e| DataError(e.to_string()))?,
        }
        for ((e, out), &ro) in encodes.iter().zip(&mut outs).zip(&rows_out) {
            let dst = &mut out[r0 * ro..r1 * ro];
            match e {
                Encode::AsF32 => {
                    for (c, v) in dst.chunks_exact_mut(4).zip(f.iter()) {
                        c.copy_from_slice(&v.to_le_bytes());
                    }
                }
                Encode::Quantize { to, imatrix, .. } => {
                    let im = imatrix.as_ref().map(|im| {
                        let start = if im.len() >= (matrix + 1) * n_per_row {
                            matrix * n_per_row
                        } else {
                            0
                        };
                        &im[start..start + n_per_row]
                    });
                    ggufkit::quantizers::quantize_rows(*to, f, dst, n_per_row, im)
                        .map_err(|e| DataError(e.to_string()))?;
                }
                Encode::HfPlain { to, n_per_row } => {
                    dst.copy_from_slice(&expr::encode_f32(f, *to, *n_per_row)?);
                }
            }
        }
        r0 = r1;
    }
    Ok(outs)
}

struct Entry {
    value: Option<Arc<Vec<u8>>>,
    /// Uses not yet consumed.
    remaining: usize,
}

/// Computed products waiting for their consumers, with use counts.
///
/// Each product counts its remaining uses ([`SharedValues::add_uses`]).
/// [`SharedValues::insert`] stores its bytes, [`SharedValues::release`] consumes one use
/// and drops the bytes after the last one. [`SharedValues::evict`] drops them early when
/// memory is short; the product is computed again when next needed (same bytes: every
/// computation is deterministic).
#[derive(Default)]
pub struct SharedValues {
    entries: HashMap<usize, Entry>,
    held: u64,
    peak: u64,
}

impl SharedValues {
    /// Adds `n` expected uses of product `id`.
    pub fn add_uses(&mut self, id: usize, n: usize) {
        self.entries
            .entry(id)
            .or_insert(Entry {
                value: None,
                remaining: 0,
            })
            .remaining += n;
    }

    /// The bytes of product `id`, when held.
    pub fn get(&self, id: usize) -> Option<&Arc<Vec<u8>>> {
        self.entries.get(&id)?.value.as_ref()
    }

    /// True when product `id` is held.
    pub fn contains(&self, id: usize) -> bool {
        self.get(id).is_some()
    }

    /// Uses of product `id` not yet consumed.
    pub fn remaining(&self, id: usize) -> usize {
        self.entries.get(&id).map_or(0, |e| e.remaining)
    }

    /// Stores the bytes of product `id` (ignored when no use remains).
    pub fn insert(&mut self, id: usize, bytes: Vec<u8>) {
        if let Some(e) = self.entries.get_mut(&id) {
            if e.remaining == 0 {
                return;
            }
            if let Some(old) = e.value.take() {
                self.held -= old.len() as u64;
            }
            self.held += bytes.len() as u64;
            e.value = Some(Arc::new(bytes));
            self.peak = self.peak.max(self.held);
        }
    }

    /// Consumes one use of product `id`; the bytes are dropped after the last one.
    pub fn release(&mut self, id: usize) {
        if let Some(e) = self.entries.get_mut(&id) {
            e.remaining = e.remaining.saturating_sub(1);
            if e.remaining == 0 {
                if let Some(v) = e.value.take() {
                    self.held -= v.len() as u64;
                }
            }
        }
    }

    /// Drops the bytes of product `id`; returns true when they were held.
    pub fn evict(&mut self, id: usize) -> bool {
        match self.entries.get_mut(&id).and_then(|e| e.value.take()) {
            Some(v) => {
                self.held -= v.len() as u64;
                true
            }
            None => false,
        }
    }

    /// Held products with their sizes, in id order.
    pub fn held(&self) -> Vec<(usize, u64)> {
        let mut v: Vec<(usize, u64)> = self
            .entries
            .iter()
            .filter_map(|(k, e)| Some((*k, e.value.as_ref()?.len() as u64)))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_are_dropped_after_their_last_use() {
        let mut c = SharedValues::default();
        c.add_uses(3, 2);
        c.insert(3, vec![0; 16]);
        assert_eq!(c.held_bytes(), 16);
        c.release(3);
        assert!(c.contains(3));
        c.release(3);
        assert!(!c.contains(3));
        assert_eq!((c.held_bytes(), c.peak_bytes()), (0, 16));
        c.add_uses(4, 1);
        c.insert(4, vec![0; 8]);
        assert!(c.evict(4) && !c.contains(4) && c.remaining(4) == 1);
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
        assert_eq!(p.of_key(1).len(), 3);
    }

    #[test]
    fn one_read_gives_every_product_as_convert_does() {
        use ggufkit::ir::Derive;
        // Two 3-D "expert" matrices of 4 rows × 64, an f16 source, and a per-matrix imatrix.
        let n = 64;
        let vals: Vec<f32> = (0..2 * 4 * n)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let f16: Vec<u8> = vals
            .iter()
            .flat_map(|v| ggufkit::quantizers::f32_to_f16(*v).to_le_bytes())
            .collect();
        let t = Tensor {
            name: "x".into(),
            dims: vec![n as u64, 4, 2],
            ty: GgmlType::F16,
            data: TensorData::Owned(Arc::new(f16)),
        };
        let im = Arc::new((0..2 * n).map(|i| 1.0 + i as f32).collect::<Vec<f32>>());
        let encodes = [
            Encode::AsF32,
            Encode::Quantize {
                to: GgmlType::Q4_0,
                n_per_row: n,
                rows_per_matrix: 4,
                imatrix: Some(im.clone()),
            },
            Encode::Quantize {
                to: GgmlType::Q8_0,
                n_per_row: n,
                rows_per_matrix: 4,
                imatrix: None,
            },
        ];
        let got = compute_products(&t, &encodes.iter().collect::<Vec<_>>()).unwrap();
        for (e, g) in encodes.iter().zip(&got) {
            let (to, imatrix) = match e {
                Encode::AsF32 => (GgmlType::F32, None),
                Encode::Quantize { to, imatrix, .. } => (*to, imatrix.clone()),
                Encode::HfPlain { .. } => unreachable!(),
            };
            let want = Convert {
                input: t.data.clone(),
                from: GgmlType::F16,
                to,
                n_per_row: n,
                rows_per_matrix: 4,
                imatrix,
            }
            .compute()
            .unwrap();
            assert_eq!(&want, g, "{to}");
        }
    }
}
