//! Integer-quantized checkpoints that the reference dequantizes (`dequant_model`): GPTQ and
//! compressed-tensors `pack-quantized`. Each quantized linear weight becomes one F32 value
//! expression ([`IntDequant`]) computed a set of output rows at a time straight from the
//! mapped packed words, so a large matrix never has its F32 form in memory whole.
//!
//! * **GPTQ** (`quant_method: "gptq"`, `bits` 2, 4 or 8; 3 is refused as by the reference):
//!   `<m>.qweight` I32 `[in / pf, out]` (`pf = 32 / bits` values per word, value `j` at bit
//!   `bits · j`, packed along the inputs), `<m>.qzeros` I32 `[groups, out / pf]` (packed along
//!   the outputs), `<m>.scales` `[groups, out]`, `<m>.g_idx` `[in]` (the group of each input).
//!   `W[o, k] = scales[g, o] · (q[k, o] − (z[g, o] + 1))` with `g = g_idx[k]` (no `+ 1` for
//!   `checkpoint_format: "gptq_v2"`), the product in F32 of the F32 scale and the integer
//!   difference.
//! * **compressed-tensors `pack-quantized`** (strategy `group`, type `int`):
//!   `<m>.weight_packed` I32 `[out, ⌈in / pf⌉]` packed along the inputs (`pf` values per word:
//!   `⌈(33 − bits) / bits⌉`), `<m>.weight_scale` `[out, in / group]`, `<m>.weight_shape` `[2]`,
//!   optionally `<m>.weight_zero_point` I32 `[⌈out / pf⌉, in / group]` packed along the outputs;
//!   `W[o, k] = (q[o, k] − offset) · scale[o, k / group]` where the offset is the zero point or
//!   `2^(bits − 1)`.
//!
//! The dequantized weights take the place of the reference's `new_tensors`: a name the model
//! already had keeps its position, a new one goes after every other tensor.

use std::sync::Arc;

use ggufkit::ir::{DataError, FileKey};

use super::expr::Expr;
use super::safetensors::{StDtype, StTensor};
use super::tensors::Entry;
use crate::ConvertError;

fn terr(name: &str, problem: impl Into<String>) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: problem.into(),
    }
}

/// How the integers are laid out.
enum Layout {
    Gptq {
        qweight: StTensor,
        qzeros: StTensor,
        scales: Expr,
        g_idx: Expr,
        /// Added to the stored zero points (1 for `checkpoint_format: "gptq"`).
        zero_add: i32,
        groups: usize,
    },
    Pack {
        packed: StTensor,
        scale: Expr,
        zero_point: Option<StTensor>,
        group: usize,
    },
}

/// A dequantized integer weight `[rows, cols]` (see the module documentation).
pub struct IntDequant {
    layout: Layout,
    bits: u32,
    /// Values per 32-bit word.
    pf: usize,
    rows: usize,
    cols: usize,
    /// The weight's name (for errors).
    name: String,
}

/// The i32 at element `i` of an I32 tensor.
fn word(t: &StTensor, i: usize) -> Result<u32, DataError> {
    let b = i
        .checked_mul(4)
        .filter(|o| o.checked_add(4).is_some_and(|end| end <= t.len))
        .ok_or_else(|| DataError(format!("{}: element {i} is outside the tensor", t.name)))
        .and_then(|o| t.range(o, 4))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl IntDequant {
    /// `[rows, cols]`.
    pub fn shape(&self) -> Vec<u64> {
        vec![self.rows as u64, self.cols as u64]
    }

    /// Every source tensor read (the scales and group indices are expressions).
    pub fn for_each_source(&self, f: &mut dyn FnMut(&StTensor)) {
        match &self.layout {
            Layout::Gptq {
                qweight,
                qzeros,
                scales,
                g_idx,
                ..
            } => {
                f(qweight);
                f(qzeros);
                scales.for_each_source(f);
                g_idx.for_each_source(f);
            }
            Layout::Pack {
                packed,
                scale,
                zero_point,
                ..
            } => {
                f(packed);
                scale.for_each_source(f);
                if let Some(z) = zero_point {
                    f(z);
                }
            }
        }
    }

    /// One line for plans.
    pub fn describe(&self) -> String {
        match &self.layout {
            Layout::Gptq { qweight, .. } => {
                format!("gptq_dequant({}, {} bits)", qweight.name, self.bits)
            }
            Layout::Pack { packed, .. } => {
                format!("pack_dequant({}, {} bits)", packed.name, self.bits)
            }
        }
    }

    /// The value key (see [`Expr::key`]).
    pub fn key(&self) -> String {
        let read =
            |t: &StTensor| format!("read({:?},{},{})", FileKey::of(&t.file), t.offset, t.len);
        match &self.layout {
            Layout::Gptq {
                qweight,
                qzeros,
                scales,
                g_idx,
                zero_add,
                groups,
            } => format!(
                "gptq{},{zero_add},{groups}({},{},{},{})",
                self.bits,
                read(qweight),
                read(qzeros),
                scales.key(),
                g_idx.key()
            ),
            Layout::Pack {
                packed,
                scale,
                zero_point,
                group,
            } => format!(
                "pack{},{group}({},{},{})",
                self.bits,
                read(packed),
                scale.key(),
                zero_point.as_ref().map(read).unwrap_or_default()
            ),
        }
    }

    /// The F32 values of the given rows, one row after the other.
    pub fn rows_f32(&self, rows: &[usize]) -> Result<Vec<f32>, DataError> {
        let mask = (1u32 << self.bits) - 1;
        let bad = |what: String| DataError(format!("{}: {what}", self.name));
        let mut out = Vec::with_capacity(rows.len() * self.cols);
        match &self.layout {
            Layout::Gptq {
                qweight,
                qzeros,
                scales,
                g_idx,
                zero_add,
                groups,
            } => {
                let sv = scales.eval_f32()?;
                let gv = g_idx.eval_f32()?;
                let out_n = self.rows;
                for &o in rows {
                    for (k, g) in gv.iter().enumerate().take(self.cols) {
                        let g = *g;
                        if !(g >= 0.0 && (g as usize) < *groups && g.fract() == 0.0) {
                            return Err(bad(format!("g_idx[{k}] = {g} is not a group")));
                        }
                        let g = g as usize;
                        let (i, j) = (k / self.pf, k % self.pf);
                        let q = (word(qweight, i * out_n + o)? >> (self.bits as usize * j)) & mask;
                        let zw = word(qzeros, g * (out_n / self.pf) + o / self.pf)?;
                        let z =
                            ((zw >> (self.bits as usize * (o % self.pf))) & mask) as i32 + zero_add;
                        let s = sv[g * out_n + o];
                        out.push(s * (q as i32 - z) as f32);
                    }
                }
            }
            Layout::Pack {
                packed,
                scale,
                zero_point,
                group,
            } => {
                let sv = scale.eval_f32()?;
                let n_groups = self.cols / group;
                let wcols = packed.shape[1] as usize;
                for &r in rows {
                    for c in 0..self.cols {
                        let g = c / group;
                        let w = word(packed, r * wcols + c / self.pf)?;
                        let q = ((w >> (self.bits as usize * (c % self.pf))) & mask) as i32;
                        let offset = match zero_point {
                            None => 1i32 << (self.bits - 1),
                            Some(z) => {
                                let zw = word(z, (r / self.pf) * n_groups + g)?;
                                ((zw >> (self.bits as usize * (r % self.pf))) & mask) as i32
                            }
                        };
                        out.push((q - offset) as f32 * sv[r * n_groups + g]);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A plain source tensor (the packed words must be read in place).
fn read_of(e: &Entry) -> Result<StTensor, ConvertError> {
    e.expr
        .as_read()
        .cloned()
        .ok_or_else(|| terr(&e.name, "packed integers must be a plain tensor"))
}

fn dims(t: &StTensor, n: usize) -> Result<Vec<usize>, ConvertError> {
    if t.shape.len() != n {
        return Err(terr(
            &t.name,
            format!("expected {n} dimensions, found {:?}", t.shape),
        ));
    }
    t.shape
        .iter()
        .map(|d| usize::try_from(*d).map_err(|_| terr(&t.name, "shape too large")))
        .collect()
}

fn want_i32(t: &StTensor) -> Result<(), ConvertError> {
    if t.dtype != StDtype::I32 {
        return Err(terr(
            &t.name,
            format!("packed integers must be I32, found {:?}", t.dtype),
        ));
    }
    Ok(())
}

/// The entries with `base + suffix` for each suffix taken out (an error naming the first
/// missing one), in suffix order.
fn take(
    entries: &mut [Option<Entry>],
    pos: &std::collections::HashMap<String, usize>,
    base: &str,
    suffixes: &[&str],
) -> Result<Vec<Entry>, ConvertError> {
    let mut out = Vec::new();
    for s in suffixes {
        let name = format!("{base}{s}");
        let e = pos
            .get(&name)
            .and_then(|&i| entries[i].take())
            .ok_or_else(|| terr(&name, "missing (the quantized weight needs it)"))?;
        out.push(e);
    }
    Ok(out)
}

/// Python dict semantics of `dequant_model`: the taken tensors removed, then each new tensor
/// assigned (an existing name keeps its position, a new one is appended).
fn finish(entries: Vec<Option<Entry>>, new: Vec<Entry>) -> Vec<Entry> {
    let mut out: Vec<Entry> = entries.into_iter().flatten().collect();
    for e in new {
        match out.iter_mut().find(|o| o.name == e.name) {
            Some(o) => *o = e,
            None => out.push(e),
        }
    }
    out
}

fn index(entries: &[Option<Entry>]) -> std::collections::HashMap<String, usize> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_ref().map(|e| (e.name.clone(), i)))
        .collect()
}

fn new_entry(name: String, d: IntDequant) -> Entry {
    Entry {
        name,
        expr: Expr::int_dequant(Arc::new(d)),
        dtype: StDtype::F32,
        fp8_q8: false,
        type_bid: None,
    }
}

/// GPTQ's `dequant_model`: every `<m>.qweight` with its `qzeros`, `scales` and `g_idx` becomes
/// `<m>.weight`.
pub fn gptq(entries: Vec<Entry>, bits: u64, v1: bool) -> Result<Vec<Entry>, ConvertError> {
    if bits == 3 {
        return Err(ConvertError::Unsupported(
            "3-bit GPTQ checkpoints are not supported (nor by the reference)".into(),
        ));
    }
    if !matches!(bits, 2 | 4 | 8) {
        return Err(ConvertError::Unsupported(format!(
            "GPTQ with {bits} bits is not supported (the reference takes 2, 4 and 8)"
        )));
    }
    let bits = bits as u32;
    let pf = 32 / bits as usize;
    let mut entries: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
    let pos = index(&entries);
    let bases: Vec<String> = entries
        .iter()
        .flatten()
        .filter_map(|e| e.name.strip_suffix(".qweight").map(str::to_string))
        .collect();
    let mut new = Vec::new();
    for base in bases {
        let mut parts = take(
            &mut entries,
            &pos,
            &base,
            &[".g_idx", ".qweight", ".qzeros", ".scales"],
        )?
        .into_iter();
        let (g_idx, qweight, qzeros, scales) = (
            parts.next().expect("4"),
            parts.next().expect("4"),
            parts.next().expect("4"),
            parts.next().expect("4"),
        );
        let (qw, qz) = (read_of(&qweight)?, read_of(&qzeros)?);
        want_i32(&qw)?;
        want_i32(&qz)?;
        let [packed_in, out]: [usize; 2] = dims(&qw, 2)?.try_into().expect("2");
        let cols = packed_in * pf;
        let ss = scales.expr.shape().to_vec();
        if ss.len() != 2 || ss[1] != out as u64 || ss[0] == 0 {
            return Err(terr(
                &scales.name,
                format!("expected [groups, {out}], found {ss:?}"),
            ));
        }
        let groups = ss[0] as usize;
        if out % pf != 0 || qz.shape != [groups as u64, (out / pf) as u64] {
            return Err(terr(
                &qz.name,
                format!(
                    "expected [{groups}, {}] (one word per {pf} outputs), found {:?}",
                    out / pf,
                    qz.shape
                ),
            ));
        }
        if g_idx.expr.shape() != [cols as u64] {
            return Err(terr(
                &g_idx.name,
                format!(
                    "expected [{cols}] (one group per input), found {:?}",
                    g_idx.expr.shape()
                ),
            ));
        }
        let d = IntDequant {
            layout: Layout::Gptq {
                qweight: qw,
                qzeros: qz,
                scales: scales.expr,
                g_idx: g_idx.expr,
                zero_add: i32::from(v1),
                groups,
            },
            bits,
            pf,
            rows: out,
            cols,
            name: format!("{base}.weight"),
        };
        new.push(new_entry(format!("{base}.weight"), d));
    }
    Ok(finish(entries, new))
}

/// compressed-tensors `pack-quantized`: every `<m>.weight_packed` with its `weight_scale`,
/// `weight_shape` and optional `weight_zero_point` becomes `<m>.weight`.
pub fn pack_quantized(
    entries: Vec<Entry>,
    bits: u64,
    group: u64,
) -> Result<Vec<Entry>, ConvertError> {
    if !(1..=8).contains(&bits) || group == 0 {
        return Err(ConvertError::Unsupported(format!(
            "pack-quantized weights of {bits} bits in groups of {group} are not supported"
        )));
    }
    let bits = bits as u32;
    let pf = (32 - (bits as usize - 1)).div_ceil(bits as usize);
    let group = group as usize;
    let mut entries: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
    let pos = index(&entries);
    let bases: Vec<String> = entries
        .iter()
        .flatten()
        .filter_map(|e| e.name.strip_suffix("_packed").map(str::to_string))
        .filter(|b| b.ends_with(".weight"))
        .collect();
    let mut new = Vec::new();
    for base in bases {
        let mut parts =
            take(&mut entries, &pos, &base, &["_packed", "_shape", "_scale"])?.into_iter();
        let (packed, shape, scale) = (
            parts.next().expect("3"),
            parts.next().expect("3"),
            parts.next().expect("3"),
        );
        let zero = take(&mut entries, &pos, &base, &["_zero_point"])
            .ok()
            .and_then(|mut v| v.pop());
        let pk = read_of(&packed)?;
        want_i32(&pk)?;
        let [rows, wcols]: [usize; 2] = dims(&pk, 2)?.try_into().expect("2");
        let sv = shape.expr.eval_f32().map_err(|e| terr(&shape.name, e.0))?;
        if sv.len() != 2 || sv.iter().any(|v| *v < 0.0 || v.fract() != 0.0) {
            return Err(terr(
                &shape.name,
                format!("expected the two dimensions of the weight, found {sv:?}"),
            ));
        }
        let (r0, cols) = (sv[0] as usize, sv[1] as usize);
        if r0 != rows || cols > wcols * pf || cols % group != 0 {
            return Err(terr(
                &packed.name,
                format!(
                    "[{rows}, {wcols}] words of {pf} values do not hold a [{r0}, {cols}] weight \
                     in whole groups of {group}"
                ),
            ));
        }
        let n_groups = cols / group;
        if scale.expr.shape() != [rows as u64, n_groups as u64] {
            return Err(terr(
                &scale.name,
                format!(
                    "expected [{rows}, {n_groups}], found {:?}",
                    scale.expr.shape()
                ),
            ));
        }
        let zero_point = match zero {
            None => None,
            Some(z) => {
                let t = read_of(&z)?;
                want_i32(&t)?;
                if t.shape != [rows.div_ceil(pf) as u64, n_groups as u64] {
                    return Err(terr(
                        &z.name,
                        format!(
                            "expected [{}, {n_groups}] (packed along the outputs), found {:?}",
                            rows.div_ceil(pf),
                            t.shape
                        ),
                    ));
                }
                Some(t)
            }
        };
        let d = IntDequant {
            layout: Layout::Pack {
                packed: pk,
                scale: scale.expr,
                zero_point,
                group,
            },
            bits,
            pf,
            rows,
            cols,
            name: base.clone(),
        };
        new.push(new_entry(base, d));
    }
    Ok(finish(entries, new))
}
