//! Work that several outputs share: the f32 stage of a tensor computed once, encoded for
//! every output that needs it.
//!
//! Every output tensor whose transform is "f32 values, then an encoding"
//! ([`Tensor::f32_stage`]) is a *use* of a *product*: the values of a [`Stage`] (compared by
//! key) encoded one way ([`Encode`]). Outputs that encode the same values the same way share
//! one product (Q4_K_M and Q6_K both write `output.weight` as Q6_K; norms are f32
//! everywhere), and all products of one stage are computed together by
//! [`compute_products`]: the values are read and converted to f32 once, slab by slab, and
//! each slab is encoded for every product. Computed products wait in [`SharedValues`] for
//! the outputs that have not written them yet, each dropped after its last use.

use std::collections::HashMap;
use std::sync::Arc;

use ggufkit_quantizers::GgmlType;

use crate::ir::{DataError, Elements, Encode, F32Values, Stage, StageKey, Tensor};

/// The identity of a stage's values and their row layout.
type GroupKey = (StageKey, usize, usize);

/// One stage's values, read once for all of its products.
pub struct Group {
    /// How to read the values (from the first output that needed them).
    pub stage: Stage,
    /// Elements of the values.
    pub n_elements: u64,
}

/// The distinct products of a pass, grouped by the stage they encode.
#[derive(Default)]
pub struct Products {
    groups: Vec<Group>,
    by_key: HashMap<GroupKey, usize>,
    /// (group, encoding) per product.
    items: Vec<(usize, Encode)>,
    of_group: HashMap<usize, Vec<usize>>,
}

impl Products {
    /// The product of tensor `t`'s f32 stage (interned), or `None` when `t` has none.
    pub fn intern(&mut self, t: &Tensor) -> Option<usize> {
        let stage = t.f32_stage()?;
        let key = stage.key();
        let encode = stage.encode.clone();
        let group = match self.by_key.get(&key) {
            Some(&g) => g,
            None => {
                let g = self.groups.len();
                self.groups.push(Group {
                    stage,
                    n_elements: t.n_elements(),
                });
                self.by_key.insert(key, g);
                g
            }
        };
        let ids = self.of_group.entry(group).or_default();
        if let Some(&id) = ids.iter().find(|&&id| self.items[id].1.same_as(&encode)) {
            return Some(id);
        }
        let id = self.items.len();
        self.items.push((group, encode));
        ids.push(id);
        Some(id)
    }

    /// The group (stage) of product `id`.
    pub fn group_of(&self, id: usize) -> usize {
        self.items[id].0
    }

    /// Group `g`.
    pub fn group(&self, g: usize) -> &Group {
        &self.groups[g]
    }

    /// Number of groups.
    pub fn n_groups(&self) -> usize {
        self.groups.len()
    }

    /// The encoding of product `id`.
    pub fn encode(&self, id: usize) -> &Encode {
        &self.items[id].1
    }

    /// The products of group `g`.
    pub fn of_group(&self, g: usize) -> &[usize] {
        self.of_group.get(&g).map_or(&[], Vec::as_slice)
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

/// Working memory of reading a group's values: values computed whole cost the whole f32
/// tensor; stored data is converted a slab (4 Mi values) at a time.
pub fn f32_cost(g: &Group) -> u64 {
    let whole = g.n_elements.saturating_mul(4);
    if g.stage.values.computed_whole() {
        whole
    } else {
        whole.min(16 << 20)
    }
}

/// Reads a stage's values once and produces every encoding in `encodes` from them.
///
/// The values are converted to f32 in slabs of whole rows (about 4 Mi values, never across
/// a matrix boundary) and each slab is encoded for every product before the next is read,
/// so the f32 values never exist whole (values a reader computes whole, such as a
/// HuggingFace expression, are taken in their working type and widened slab by slab). This
/// is [`crate::ir::Convert::compute`] with one input and several outputs: the same slabs,
/// the same decoding, the same per-matrix importance weights, and row-wise encoders, so each
/// product equals what the output's own transform computes.
pub fn compute_products(stage: &Stage, encodes: &[&Encode]) -> Result<Vec<Vec<u8>>, DataError> {
    match &stage.values {
        F32Values::Data { data, ty } => {
            compute_from(stage, &data.bytes()?, Elem::Ggml(*ty), encodes)
        }
        F32Values::Computed { source, .. } => {
            let (elements, bytes) = source.compute()?;
            compute_from(stage, &bytes, Elem::Values(elements), encodes)
        }
    }
}

/// How the elements of a source buffer are stored.
#[derive(Clone, Copy)]
enum Elem {
    /// A GGML type (F32, F16, BF16 or a block type).
    Ggml(GgmlType),
    /// A reader's computed values.
    Values(Elements),
}

fn compute_from(
    stage: &Stage,
    raw: &[u8],
    elem: Elem,
    encodes: &[&Encode],
) -> Result<Vec<Vec<u8>>, DataError> {
    let n_per_row = stage.n_per_row.max(1);
    let rows_per_matrix = stage.rows_per_matrix.max(1);
    let in_ty = match elem {
        Elem::Ggml(ty) => ty,
        Elem::Values(Elements::F32) => GgmlType::F32,
        Elem::Values(Elements::F16) => GgmlType::F16,
        Elem::Values(Elements::Bf16) => GgmlType::BF16,
    };
    let in_row = ggufkit_quantizers::row_size(in_ty, n_per_row)
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
            e.row_bytes(n_per_row).ok_or_else(|| {
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
        let f = &mut floats[..(r1 - r0) * n_per_row];
        decode(elem, &raw[r0 * in_row..r1 * in_row], f)?;
        for ((e, out), &ro) in encodes.iter().zip(&mut outs).zip(&rows_out) {
            encode(e, f, matrix, n_per_row, &mut out[r0 * ro..r1 * ro])?;
        }
        r0 = r1;
    }
    Ok(outs)
}

/// Widens or dequantizes one slab to f32.
fn decode(elem: Elem, src: &[u8], f: &mut [f32]) -> Result<(), DataError> {
    match elem {
        Elem::Ggml(GgmlType::F32) | Elem::Values(Elements::F32) => {
            for (v, c) in f.iter_mut().zip(src.chunks_exact(4)) {
                *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        Elem::Values(Elements::F16) => {
            for (v, c) in f.iter_mut().zip(src.chunks_exact(2)) {
                *v = ggufkit_quantizers::f16_to_f32(u16::from_le_bytes([c[0], c[1]]));
            }
        }
        Elem::Values(Elements::Bf16) => {
            for (v, c) in f.iter_mut().zip(src.chunks_exact(2)) {
                *v = ggufkit_quantizers::bf16_to_f32(u16::from_le_bytes([c[0], c[1]]));
            }
        }
        Elem::Ggml(ty) => {
            ggufkit_quantizers::dequantize_rows(ty, src, f).map_err(|e| DataError(e.to_string()))?
        }
    }
    Ok(())
}

/// Encodes one slab of f32 values (rows of matrix `matrix`) into `dst`.
fn encode(
    e: &Encode,
    f: &[f32],
    matrix: usize,
    n_per_row: usize,
    dst: &mut [u8],
) -> Result<(), DataError> {
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
            ggufkit_quantizers::quantize_rows(*to, f, dst, n_per_row, im)
                .map_err(|e| DataError(e.to_string()))?;
        }
        Encode::Reader {
            to,
            n_per_row,
            encode,
            ..
        } => dst.copy_from_slice(&encode(f, *to, *n_per_row)?),
    }
    Ok(())
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
    use crate::ir::{Convert, Derive, TensorData};

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

    fn convert_tensor(input: &TensorData, to: GgmlType, im: Option<Vec<f32>>) -> Tensor {
        let c = Convert::new(input.clone(), GgmlType::F32, to, 256, 4, im.map(Arc::new)).unwrap();
        Tensor {
            name: "x".into(),
            dims: vec![256, 4],
            ty: to,
            data: TensorData::Derived(Arc::new(c)),
        }
    }

    #[test]
    fn equal_encodings_of_equal_values_are_one_product() {
        let a_in = TensorData::Owned(Arc::new(vec![0u8; 256 * 4 * 4]));
        let b_in = TensorData::Owned(Arc::new(vec![0u8; 256 * 4 * 4]));
        let mut p = Products::default();
        let a = p.intern(&convert_tensor(&a_in, GgmlType::Q6_K, None));
        let a = a.unwrap();
        assert_eq!(
            p.intern(&convert_tensor(&a_in, GgmlType::Q6_K, None)),
            Some(a)
        );
        assert_ne!(
            p.intern(&convert_tensor(&b_in, GgmlType::Q6_K, None)),
            Some(a)
        );
        assert_ne!(
            p.intern(&convert_tensor(&a_in, GgmlType::Q4_K, None)),
            Some(a)
        );
        let im = Some(vec![1.0; 256]);
        let b = p
            .intern(&convert_tensor(&a_in, GgmlType::Q6_K, im.clone()))
            .unwrap();
        assert_ne!(b, a);
        assert_eq!(
            p.intern(&convert_tensor(&a_in, GgmlType::Q6_K, im)),
            Some(b)
        );
        assert_eq!(p.len(), 4);
        assert_eq!(p.n_groups(), 2);
        assert_eq!(p.of_group(p.group_of(a)).len(), 3);
    }

    #[test]
    fn one_read_gives_every_product_as_convert_does() {
        // Two 3-D "expert" matrices of 4 rows × 64, an f16 source, and a per-matrix imatrix.
        let n = 64;
        let vals: Vec<f32> = (0..2 * 4 * n)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let f16: Vec<u8> = vals
            .iter()
            .flat_map(|v| ggufkit_quantizers::f32_to_f16(*v).to_le_bytes())
            .collect();
        let input = TensorData::Owned(Arc::new(f16));
        let im = Arc::new((0..2 * n).map(|i| 1.0 + i as f32).collect::<Vec<f32>>());
        let converts: Vec<Convert> = [
            (GgmlType::F32, None),
            (GgmlType::Q4_0, Some(im.clone())),
            (GgmlType::Q8_0, None),
        ]
        .into_iter()
        .map(|(to, imatrix)| Convert::new(input.clone(), GgmlType::F16, to, n, 4, imatrix).unwrap())
        .collect();
        let stages: Vec<Stage> = converts.iter().map(|c| c.f32_stage().unwrap()).collect();
        assert!(stages.iter().all(|s| s.key() == stages[0].key()));
        let encodes: Vec<&Encode> = stages.iter().map(|s| &s.encode).collect();
        let got = compute_products(&stages[0], &encodes).unwrap();
        for (c, g) in converts.iter().zip(&got) {
            assert_eq!(&c.compute().unwrap(), g, "{}", c.to);
        }
    }
}
