//! Pre-quantized weights that the reference converter repacks into GGML blocks instead of
//! dequantizing: their bytes reach the output by moving bits ([`ggufkit::ir::Packed`]), a
//! range of rows at a time straight from the mapped source.
//!
//! * **MXFP4, as gpt-oss ships it** (`GptOssModel.generate_extra_tensors`): per layer,
//!   `mlp.experts.down_proj_blocks` `[n_expert, rows, cols / 32, 16]` U8 (32 E2M1 values per
//!   block, element `2k` in the low nibble of byte `k`, `2k + 1` in the high one) with
//!   `down_proj_scales` `[n_expert, rows, cols / 32]` U8 (one E8M0 exponent per block); and
//!   `gate_up_proj_blocks` / `_scales`, whose rows interleave gate (even rows) and up (odd
//!   rows). Each becomes GGML MXFP4 (`block_mxfp4`: the exponent byte, then 16 bytes whose
//!   byte `j` holds element `j` low and element `j + 16` high); the 4-bit codes are the same
//!   on both sides, so this is lossless. The values are `kvalues_mxfp4[code] · 2^(e − 128)`
//!   in GGML and `e2m1[code] · 2^(e − 127)` in the checkpoint: equal, since the table holds
//!   the E2M1 values doubled.
//! * **NVFP4, as NVIDIA's ModelOpt ships it** (`quant_algo: "NVFP4"`,
//!   `_generate_nvfp4_tensors`): `<m>.weight` U8 `[rows, cols / 2]` (element `2i` low, `2i + 1`
//!   high), `<m>.weight_scale` F8_E4M3 `[rows, cols / 16]`, scalar `weight_scale_2` and
//!   `input_scale`. Four 16-value sub-blocks make a GGML NVFP4 block (the four scales with the
//!   sign bit dropped, then per sub-block 8 bytes: element `j` low, `j + 8` high); the
//!   per-tensor factors are written beside it as `<name>.scale` / `<name>.input_scale` (F32)
//!   unless they are 1. The weight is mapped by name only, as the reference writes it before
//!   the model's own tensors; Llama's q/k rows take the rotary permutation
//!   (`LlamaModel._repack_nvfp4`). Experts stored one per tensor are stacked per layer and
//!   projection (`_flush_nvfp4_experts`); compressed-tensors' `nvfp4-pack-quantized` layout
//!   (`weight_packed`, and the reciprocal factors `weight_global_scale` /
//!   `input_global_scale`) is read as ModelOpt's; `W4A16_NVFP4` weights are listed in
//!   `general.tensor_extra.*` with `prec_a4` false.

use std::collections::HashMap;

use ggufkit::ir::{DataError, PackRows, Packed, Rows};
use ggufkit::quantizers::GgmlType;

use super::expr::Expr;
use super::safetensors::{StDtype, StTensor};
use super::tensors::Entry;
use crate::ConvertError;

/// Elements per MXFP4 block.
const MXFP4_QK: usize = 32;
/// Bytes of one GGML MXFP4 block (the exponent, then 16 code bytes).
const MXFP4_BLOCK: usize = 17;

fn terr(name: &str, problem: impl Into<String>) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: problem.into(),
    }
}

/// Output row `o` of an MXFP4 expert tensor: expert `o / rows`, source row
/// `start + step · (o % rows)` of that expert's `src_rows`.
struct Mxfp4Rows {
    /// The output's (HF) name, for descriptions.
    name: String,
    blocks: StTensor,
    scales: StTensor,
    experts: usize,
    src_rows: usize,
    rows: usize,
    start: usize,
    step: usize,
    /// Blocks per row.
    nb: usize,
}

impl Mxfp4Rows {
    /// The source row (over all experts) of output row `o`.
    fn source(&self, o: usize) -> usize {
        (o / self.rows) * self.src_rows + self.start + self.step * (o % self.rows)
    }
}

/// One MXFP4 block from gpt-oss's 16 code bytes (`2k` low, `2k + 1` high) and its exponent.
fn mxfp4_block(e8m0: u8, codes: &[u8], out: &mut [u8]) {
    out[0] = e8m0;
    let code = |i: usize| (codes[i / 2] >> (4 * (i % 2))) & 0x0f;
    for j in 0..MXFP4_QK / 2 {
        out[1 + j] = code(j) | (code(j + MXFP4_QK / 2) << 4);
    }
}

impl PackRows for Mxfp4Rows {
    fn describe(&self) -> String {
        format!(
            "{} from {} / {} (MXFP4, rows {}::{})",
            self.name, self.blocks.name, self.scales.name, self.start, self.step
        )
    }

    fn rows(&self) -> Rows {
        Rows {
            count: self.experts * self.rows,
            out_bytes: self.nb * MXFP4_BLOCK,
            in_bytes: self.nb * MXFP4_BLOCK,
        }
    }

    fn pack_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let row_codes = self.nb * 16;
        let mut out = vec![0u8; range.len() * self.nb * MXFP4_BLOCK];
        for (o, dst) in range.zip(out.chunks_exact_mut(self.nb * MXFP4_BLOCK)) {
            let s = self.source(o);
            let outside = |e: DataError| {
                DataError(format!(
                    "{}: row {o} lies outside its source: {e}",
                    self.describe()
                ))
            };
            // Each row's own bytes: a remote source reads only those.
            let c = self
                .blocks
                .range(s * row_codes, row_codes)
                .map_err(outside)?;
            let e = self.scales.range(s * self.nb, self.nb).map_err(outside)?;
            for ((d, c), &e) in dst
                .chunks_exact_mut(MXFP4_BLOCK)
                .zip(c.chunks_exact(16))
                .zip(e.iter())
            {
                mxfp4_block(e, c, d);
            }
        }
        Ok(out)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        // Per expert, the source rows from the range's first to its last. Interleaved rows
        // share pages with the other half (gate / up): those pages are released too and
        // fault back in (from the page cache) when the other half is written.
        let (codes, mut o) = (self.nb * 16, range.start);
        while o < range.end && self.rows > 0 {
            let end = range.end.min((o / self.rows + 1) * self.rows);
            let (first, last) = (self.source(o), self.source(end - 1));
            let n = last + 1 - first;
            self.blocks
                .file
                .release(self.blocks.offset + first * codes, n * codes);
            self.scales
                .file
                .release(self.scales.offset + first * self.nb, n * self.nb);
            o = end;
        }
    }
}

/// The `[n_expert, rows, blocks]` of a gpt-oss `*_blocks` / `*_scales` pair, checked as the
/// reference's `repack_mxfp4` asserts (U8, 4-D blocks of 16 bytes, scales one per block).
fn mxfp4_shape(blocks: &StTensor, scales: &StTensor) -> Result<[usize; 3], ConvertError> {
    for t in [blocks, scales] {
        if t.dtype != StDtype::U8 {
            return Err(terr(
                &t.name,
                format!("MXFP4 data must be U8, found {:?}", t.dtype),
            ));
        }
    }
    let b = &blocks.shape;
    if b.len() != 4 || b[3] != 16 {
        return Err(terr(
            &blocks.name,
            format!("MXFP4 blocks must be [n_expert, rows, blocks, 16], found {b:?}"),
        ));
    }
    if scales.shape[..] != b[..3] {
        return Err(terr(
            &scales.name,
            format!(
                "MXFP4 scales {:?} do not match their blocks {b:?} (expected {:?})",
                scales.shape,
                &b[..3]
            ),
        ));
    }
    let dim = |v: u64| usize::try_from(v).map_err(|_| terr(&blocks.name, "shape too large"));
    Ok([dim(b[0])?, dim(b[1])?, dim(b[2])?])
}

/// The MXFP4 expert tensor `name` made of rows `start::step` of each expert of `blocks`.
fn mxfp4_tensor(
    name: String,
    blocks: &StTensor,
    scales: &StTensor,
    start: usize,
    step: usize,
) -> Result<(String, Expr), ConvertError> {
    let [experts, src_rows, nb] = mxfp4_shape(blocks, scales)?;
    let rows = src_rows.saturating_sub(start).div_ceil(step);
    let shape = vec![experts as u64, rows as u64, (nb * MXFP4_QK) as u64];
    let source = Mxfp4Rows {
        name: name.clone(),
        blocks: blocks.clone(),
        scales: scales.clone(),
        experts,
        src_rows,
        rows,
        start,
        step,
        nb,
    };
    let expr = Expr::packed(
        GgmlType::MXFP4,
        shape,
        Packed::new(source),
        vec![blocks.clone(), scales.clone()],
    );
    Ok((name, expr))
}

/// `GptOssModel.generate_extra_tensors`: every `mlp.experts.{down,gate_up}_proj_scales`, in
/// model order, with the `_blocks` of the same projection, becomes MXFP4 expert tensors (HF
/// names `…mlp.experts.{down,gate,up}_proj.weight`, for the table to map): gate from the
/// even rows, up from the odd ones. The pairs are removed from `entries` (`modify_tensors`
/// writes nothing for them).
pub fn gpt_oss_mxfp4(entries: &mut Vec<Entry>) -> Result<Vec<(String, Expr)>, ConvertError> {
    let packed = |name: &str| {
        (name.contains("down_proj") || name.contains("gate_up_proj"))
            && (name.contains("_blocks") || name.contains("_scales"))
    };
    let read = |e: &Entry| -> Result<StTensor, ConvertError> {
        e.expr
            .as_read()
            .cloned()
            .ok_or_else(|| terr(&e.name, "MXFP4 data must be a plain tensor"))
    };
    let mut out = Vec::new();
    for e in entries.iter() {
        for (proj, outs) in [
            ("down_proj", &[("down_proj.weight", 0, 1)][..]),
            (
                "gate_up_proj",
                &[("gate_proj.weight", 0, 2), ("up_proj.weight", 1, 2)][..],
            ),
        ] {
            let marker = format!("mlp.experts.{proj}_scales");
            if !e.name.contains(&marker) {
                continue;
            }
            let blocks_name = e.name.replace("_scales", "_blocks");
            let blocks = entries
                .iter()
                .find(|b| b.name == blocks_name)
                .ok_or_else(|| terr(&e.name, format!("MXFP4 scales without '{blocks_name}'")))?;
            let (blocks, scales) = (read(blocks)?, read(e)?);
            for (suffix, start, step) in outs {
                let name = e.name.replace(&format!("{proj}_scales"), suffix);
                out.push(mxfp4_tensor(name, &blocks, &scales, *start, *step)?);
            }
        }
    }
    entries.retain(|e| !packed(&e.name));
    Ok(out)
}

/// Per-expert MXFP4 pairs stacked into one expert tensor (compressed-tensors'
/// `mxfp4-pack-quantized` layout, as DeepSeek V4 ships its routed experts): each expert's
/// weight `[rows, cols / 2]` holds element `2i` in the low nibble of byte `i` and `2i + 1` in
/// the high one, its scale `[rows, cols / 32]` one E8M0 exponent per 32 values. Output row
/// `o` is row `o % rows` of expert `o / rows`.
struct Mxfp4Experts {
    /// The output's name, for descriptions.
    name: String,
    /// `(weight, scale)` per expert, in expert order.
    parts: Vec<(StTensor, StTensor)>,
    /// Rows per expert.
    rows: usize,
    /// Blocks per row.
    nb: usize,
}

impl PackRows for Mxfp4Experts {
    fn describe(&self) -> String {
        format!(
            "{} from {} MXFP4 expert pairs ({} / {}, …)",
            self.name,
            self.parts.len(),
            self.parts.first().map_or("", |p| p.0.name.as_str()),
            self.parts.first().map_or("", |p| p.1.name.as_str())
        )
    }

    fn rows(&self) -> Rows {
        Rows {
            count: self.parts.len() * self.rows,
            out_bytes: self.nb * MXFP4_BLOCK,
            in_bytes: self.nb * MXFP4_BLOCK,
        }
    }

    fn pack_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let row_codes = self.nb * 16;
        let mut out = vec![0u8; range.len() * self.nb * MXFP4_BLOCK];
        for (o, dst) in range.zip(out.chunks_exact_mut(self.nb * MXFP4_BLOCK)) {
            let (w, s) = self.parts.get(o / self.rows).ok_or_else(|| {
                DataError(format!("{}: row {o} outside its experts", self.describe()))
            })?;
            let r = o % self.rows;
            let outside = |e: DataError| {
                DataError(format!(
                    "{}: row {o} lies outside its source: {e}",
                    self.describe()
                ))
            };
            let c = w.range(r * row_codes, row_codes).map_err(outside)?;
            let e = s.range(r * self.nb, self.nb).map_err(outside)?;
            for ((d, c), &e) in dst
                .chunks_exact_mut(MXFP4_BLOCK)
                .zip(c.chunks_exact(16))
                .zip(e.iter())
            {
                mxfp4_block(e, c, d);
            }
        }
        Ok(out)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        let (codes, mut o) = (self.nb * 16, range.start);
        while o < range.end && self.rows > 0 {
            let end = range.end.min((o / self.rows + 1) * self.rows);
            if let Some((w, s)) = self.parts.get(o / self.rows) {
                let (first, n) = (o % self.rows, end - o);
                w.file.release(w.offset + first * codes, n * codes);
                s.file.release(s.offset + first * self.nb, n * self.nb);
            }
            o = end;
        }
    }
}

/// The experts' `(weight, scale)` pairs (expert order) as one GGML MXFP4 tensor `[n_expert,
/// rows, cols]` named `name`, checked as the reference's `repack_mxfp4_blocks` checks them:
/// 2-D one-byte data, rows of whole 32-value blocks, one scale byte per block, and (as its
/// stacking needs) every expert of one shape.
pub fn mxfp4_experts(name: &str, parts: Vec<(StTensor, StTensor)>) -> Result<Expr, ConvertError> {
    let Some((w0, _)) = parts.first() else {
        return Err(terr(name, "no MXFP4 experts to stack"));
    };
    let shape0 = w0.shape.clone();
    for (w, s) in &parts {
        for t in [w, s] {
            if t.dtype.size() != 1 {
                return Err(terr(
                    &t.name,
                    format!(
                        "MXFP4 data must be one byte per element, found {:?}",
                        t.dtype
                    ),
                ));
            }
        }
        if w.shape.len() != 2 {
            return Err(terr(
                &w.name,
                format!("MXFP4 weight must be [rows, cols / 2], found {:?}", w.shape),
            ));
        }
        if w.shape != shape0 {
            return Err(terr(
                &w.name,
                format!(
                    "MXFP4 experts of one tensor differ in shape: {:?} and {shape0:?}",
                    w.shape
                ),
            ));
        }
        let cols = w.shape[1].saturating_mul(2);
        if !cols.is_multiple_of(MXFP4_QK as u64) {
            return Err(terr(
                &w.name,
                format!("MXFP4 source row has {cols} values, expected a multiple of 32"),
            ));
        }
        let want = [w.shape[0], cols / MXFP4_QK as u64];
        if s.shape[..] != want {
            return Err(terr(
                &s.name,
                format!("MXFP4 scale shape {:?} does not match {want:?}", s.shape),
            ));
        }
    }
    let dim = |v: u64| usize::try_from(v).map_err(|_| terr(name, "shape too large"));
    let (rows, cols) = (dim(shape0[0])?, dim(shape0[1])? * 2);
    let shape = vec![parts.len() as u64, rows as u64, cols as u64];
    let inputs = parts
        .iter()
        .flat_map(|(w, s)| [w.clone(), s.clone()])
        .collect();
    let source = Mxfp4Experts {
        name: name.to_string(),
        parts,
        rows,
        nb: cols / MXFP4_QK,
    };
    Ok(Expr::packed(
        GgmlType::MXFP4,
        shape,
        Packed::new(source),
        inputs,
    ))
}

/// Takes each group's `(weight, scale)` tensors out of `entries` in one pass (the other
/// entries keep their order) and repacks each group as one MXFP4 expert tensor named as the
/// group ([`mxfp4_experts`]); a tensor a group names that is not there, or is already
/// transformed, is an error naming it.
pub fn take_mxfp4_experts(
    entries: &mut Vec<Entry>,
    wanted: Vec<(String, Vec<(String, String)>)>,
) -> Result<Vec<(String, Expr)>, ConvertError> {
    use std::collections::HashSet;
    let consumed: HashSet<String> = wanted
        .iter()
        .flat_map(|(_, parts)| parts.iter().flat_map(|(w, s)| [w.clone(), s.clone()]))
        .collect();
    let mut taken: HashMap<String, StTensor> = HashMap::new();
    let mut kept = Vec::with_capacity(entries.len());
    for e in entries.drain(..) {
        if !consumed.contains(&e.name) {
            kept.push(e);
            continue;
        }
        let t = e
            .expr
            .as_read()
            .cloned()
            .ok_or_else(|| ConvertError::Tensor {
                name: e.name.clone(),
                problem: "expected a stored tensor, found a transformed one".into(),
            })?;
        taken.insert(e.name, t);
    }
    *entries = kept;
    let mut out = Vec::with_capacity(wanted.len());
    for (name, parts) in wanted {
        let mut pairs = Vec::with_capacity(parts.len());
        for (weight, scale) in parts {
            let mut take = |n: &str| {
                taken.remove(n).ok_or_else(|| ConvertError::Tensor {
                    name: n.to_string(),
                    problem: "missing".into(),
                })
            };
            pairs.push((take(&weight)?, take(&scale)?));
        }
        let expr = mxfp4_experts(&name, pairs)?;
        out.push((name, expr));
    }
    Ok(out)
}

/// Values per NVFP4 sub-block (one UE4M3 scale each); four make a GGML block.
const NVFP4_SUB: usize = 16;
/// Bytes of one GGML NVFP4 block (4 scales, then 4 × 8 code bytes) of 64 values.
const NVFP4_BLOCK: usize = 36;

/// Rows of a ModelOpt NVFP4 weight: `weight` U8 `[rows, cols / 2]` (element `2i` in the low
/// nibble of byte `i`, `2i + 1` in the high one), `scale` E4M3 `[rows, cols / 16]`; several
/// such pairs of one shape (the experts of a layer) are stacked, expert by expert.
struct Nvfp4Rows {
    name: String,
    /// `(weight, scale)` of each stacked part (one for a plain weight).
    parts: Vec<(StTensor, StTensor)>,
    /// Rows of each part.
    rows: usize,
    /// Sub-blocks per row.
    nb: usize,
    /// Rows regrouped by Llama's q/k head permutation with this many heads (one part only).
    n_head: Option<usize>,
}

impl Nvfp4Rows {
    /// The source row, within its part, of row `r` of a part (`LlamaModel.permute`:
    /// `reshape(n_head, 2, half, …).swapaxes(1, 2)`).
    fn source(&self, r: usize) -> usize {
        match self.n_head {
            None => r,
            Some(n) => {
                let per = self.rows / n;
                let half = per / 2;
                let (h, rem) = (r / per, r % per);
                h * per + (rem % 2) * half + rem / 2
            }
        }
    }
}

/// One GGML NVFP4 block from four ModelOpt sub-blocks (8 code bytes each) and their E4M3
/// scales (the sign bit dropped: UE4M3).
fn nvfp4_block(scales: &[u8], codes: &[u8], out: &mut [u8]) {
    for k in 0..4 {
        out[k] = scales[k] & 0x7f;
        let c = &codes[k * 8..k * 8 + 8];
        let code = |i: usize| (c[i / 2] >> (4 * (i % 2))) & 0x0f;
        for j in 0..NVFP4_SUB / 2 {
            out[4 + k * 8 + j] = code(j) | (code(j + NVFP4_SUB / 2) << 4);
        }
    }
}

impl PackRows for Nvfp4Rows {
    fn describe(&self) -> String {
        let (w, s) = &self.parts[0];
        let more = if self.parts.len() > 1 {
            format!(", {} experts", self.parts.len())
        } else {
            String::new()
        };
        format!("{} from {} / {} (NVFP4{more})", self.name, w.name, s.name)
    }

    fn rows(&self) -> Rows {
        Rows {
            count: self.parts.len() * self.rows,
            out_bytes: self.nb / 4 * NVFP4_BLOCK,
            in_bytes: self.nb * 9,
        }
    }

    fn pack_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let out_row = self.nb / 4 * NVFP4_BLOCK;
        let mut out = vec![0u8; range.len() * out_row];
        for (r, dst) in range.zip(out.chunks_exact_mut(out_row)) {
            let outside = |why: String| {
                DataError(format!(
                    "{}: row {r} lies outside its source{why}",
                    self.describe()
                ))
            };
            let (w, s) = self
                .parts
                .get(r / self.rows)
                .ok_or_else(|| outside(String::new()))?;
            let src = self.source(r % self.rows);
            // Each row's own bytes: a remote source reads only those.
            let c = w
                .range(src * self.nb * 8, self.nb * 8)
                .map_err(|e| outside(format!(": {e}")))?;
            let e = s
                .range(src * self.nb, self.nb)
                .map_err(|e| outside(format!(": {e}")))?;
            let (c, e) = (&c[..], &e[..]);
            for ((d, c), e) in dst
                .chunks_exact_mut(NVFP4_BLOCK)
                .zip(c.chunks_exact(32))
                .zip(e.chunks_exact(4))
            {
                nvfp4_block(e, c, d);
            }
        }
        Ok(out)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        if self.rows == 0 {
            return;
        }
        // Per part, the rows of the range that lie in it.
        for (p, (w, s)) in self.parts.iter().enumerate() {
            let (lo, hi) = (p * self.rows, (p + 1) * self.rows);
            let (mut a, mut b) = (range.start.max(lo), range.end.min(hi));
            if let Some(n) = self.n_head.filter(|n| *n > 0) {
                // Permuted rows stay within their head: release the heads the range covers
                // whole (their source rows are the same span).
                let per = self.rows / n;
                if per == 0 {
                    continue;
                }
                a = lo + (a - lo).div_ceil(per) * per;
                b = lo + (b.saturating_sub(lo)) / per * per;
            }
            if a >= b {
                continue;
            }
            let (first, n) = (a - lo, b - a);
            w.file
                .release(w.offset + first * self.nb * 8, n * self.nb * 8);
            s.file.release(s.offset + first * self.nb, n * self.nb);
        }
    }
}

/// One repacked NVFP4 weight: its HF name (mapped by the table), the packed values, and the
/// per-tensor factors written beside it (`.scale`, `.input_scale`: suffixes replacing
/// `.weight` in the GGUF name).
pub struct Nvfp4Out {
    /// The weight's HF name.
    pub name: String,
    /// The NVFP4 data.
    pub weight: Expr,
    /// `(suffix, values)` of the non-trivial per-tensor factors, in writing order.
    pub scales: Vec<(&'static str, Expr)>,
    /// Quantized as `W4A16_NVFP4` (`_tag_prec_a4`): listed with `prec_a4` false in
    /// `general.tensor_extra.*`.
    pub a16: bool,
}

/// What the NVFP4 repacking needs to know of the checkpoint (`prepare_tensors`).
pub struct Nvfp4Config {
    /// compressed-tensors' layout (`nvfp4-pack-quantized`): `weight_packed` is the weight,
    /// and `weight_global_scale` / `input_global_scale` are the reciprocals of ModelOpt's
    /// `weight_scale_2` / `input_scale`.
    pub compressed_tensors: bool,
    /// `num_local_experts` / `num_experts` (0 when absent): a layer's experts stored one per
    /// tensor are stacked when this many of one projection have been seen.
    pub n_experts: u64,
    /// The checkpoint-wide `quant_algo`.
    pub algo: Option<String>,
    /// `quantized_layers`: module path → its `quant_algo`.
    pub layer_algo: HashMap<String, Option<String>>,
    /// `(n_head, n_head_kv)` for Llama and its subclasses (`LlamaModel._repack_nvfp4`): the
    /// rows of `q_proj` and `k_proj` (and their scales) take the rotary head permutation.
    pub qk_heads: Option<(u64, Option<u64>)>,
}

impl Nvfp4Config {
    /// `_tag_prec_a4`: the algorithm of the innermost module of `hf_name` listed in
    /// `quantized_layers` (else the checkpoint's) is `W4A16_NVFP4`.
    fn a16(&self, hf_name: &str) -> bool {
        let mut name = hf_name.strip_suffix(".weight").unwrap_or(hf_name);
        name = name.strip_suffix(".bias").unwrap_or(name);
        let mut algo = self.algo.as_deref();
        while !name.is_empty() {
            if let Some(a) = self.layer_algo.get(name) {
                algo = a.as_deref();
                break;
            }
            name = name.rsplit_once('.').map_or("", |(head, _)| head);
        }
        algo == Some("W4A16_NVFP4")
    }
}

/// The checked `(weight, scale)` pair of one NVFP4 weight and its `[rows, sub-blocks]`.
fn nvfp4_pair(w: &StTensor, s: &StTensor) -> Result<(u64, u64), ConvertError> {
    if w.dtype != StDtype::U8 {
        return Err(terr(
            &w.name,
            format!("NVFP4 weights must be U8, found {:?}", w.dtype),
        ));
    }
    if !matches!(s.dtype, StDtype::F8E4M3 | StDtype::U8) {
        return Err(terr(
            &s.name,
            format!("NVFP4 scales must be F8_E4M3, found {:?}", s.dtype),
        ));
    }
    let (rows, nb) = (s.shape[0], s.shape[1]);
    if s.shape.len() != 2
        || w.shape.len() != 2
        || w.shape[0] != rows
        || w.shape[1].checked_mul(2) != nb.checked_mul(NVFP4_SUB as u64)
        || nb % 4 != 0
    {
        return Err(terr(
            &s.name,
            format!(
                "NVFP4 scales {:?} do not fit the weight {:?} (one per 16 values, rows of \
                 whole 64-value blocks)",
                s.shape, w.shape
            ),
        ));
    }
    Ok((rows, nb))
}

/// `float(t.float().sum())` of a per-tensor factor, 1 when absent (per-expert factors).
fn factor_sum(entries: &[Entry], name: &str) -> Result<f32, ConvertError> {
    match entries.iter().find(|e| e.name == name) {
        None => Ok(1.0),
        Some(e) => {
            let v = e.expr.eval_f32().map_err(|err| terr(name, err.0))?;
            Ok(v.iter().sum::<f32>())
        }
    }
}

/// The experts of one `(layer, projection)` gathered so far: `(expert id, weight, scale,
/// weight_scale_2, input_scale)`.
type ExpertParts = Vec<(u64, StTensor, StTensor, f32, f32)>;

/// `_flush_nvfp4_experts`: the experts sorted by id and stacked under
/// `model.layers.{bid}.mlp.experts.{proj}.weight`, with the per-expert factors as F32
/// `[n_expert]` tensors unless all are within `np.allclose` of 1.
fn flush_experts(
    bid: u64,
    proj: &str,
    mut parts: ExpertParts,
    cfg: &Nvfp4Config,
) -> Result<Nvfp4Out, ConvertError> {
    parts.sort_by_key(|p| p.0);
    let name = format!("model.layers.{bid}.mlp.experts.{proj}.weight");
    let (first_w, first_s) = (&parts[0].1, &parts[0].2);
    let (rows, nb) = (first_s.shape[0], first_s.shape[1]);
    if let Some(p) = parts
        .iter()
        .find(|p| p.1.shape != first_w.shape || p.2.shape != first_s.shape)
    {
        return Err(terr(
            &p.1.name,
            format!(
                "expert shapes differ ({:?} / {:?} against {:?} / {:?} of {}): they cannot \
                 be stacked",
                p.1.shape, p.2.shape, first_w.shape, first_s.shape, first_w.name
            ),
        ));
    }
    let usize_of = |v: u64| usize::try_from(v).map_err(|_| terr(&first_s.name, "shape too large"));
    let n = parts.len() as u64;
    let shape = vec![n, rows, nb * NVFP4_SUB as u64];
    let mut inputs = Vec::new();
    for p in &parts {
        inputs.push(p.1.clone());
        inputs.push(p.2.clone());
    }
    let source = Nvfp4Rows {
        name: name.clone(),
        parts: parts.iter().map(|p| (p.1.clone(), p.2.clone())).collect(),
        rows: usize_of(rows)?,
        nb: usize_of(nb)?,
        n_head: None,
    };
    let weight = Expr::packed(GgmlType::NVFP4, shape, Packed::new(source), inputs);
    let mut scales = Vec::new();
    for (suffix, values) in [
        (".scale", parts.iter().map(|p| p.3).collect::<Vec<f32>>()),
        (".input_scale", parts.iter().map(|p| p.4).collect()),
    ] {
        // `np.allclose(scales, 1.0, atol=1e-6)` (rtol 1e-5), in double precision.
        let near_one = values
            .iter()
            .all(|v| (*v as f64 - 1.0).abs() <= 1e-6 + 1e-5);
        if !near_one {
            scales.push((suffix, Expr::constant(values, vec![n])));
        }
    }
    Ok(Nvfp4Out {
        a16: cfg.a16(&name),
        name,
        weight,
        scales,
    })
}

/// `(layer, projection, expert)` of a per-expert weight `….layers.L….experts.E.{gate,up,down}_proj.weight`
/// (the layer 0 when the name has none).
fn expert_of(name: &str) -> Option<(u64, &'static str, u64)> {
    let (head, tail) = name.rsplit_once(".experts.")?;
    let (id, proj) = tail.split_once('.')?;
    let id: u64 = id
        .parse()
        .ok()
        .filter(|_| id.bytes().all(|b| b.is_ascii_digit()))?;
    let proj = ["gate_proj", "up_proj", "down_proj"]
        .into_iter()
        .find(|p| proj == format!("{p}.weight"))?;
    let bid = head
        .split(".layers.")
        .nth(1)
        .and_then(|r| r.split('.').next())
        .and_then(|b| b.parse().ok())
        .unwrap_or(0);
    Some((bid, proj, id))
}

/// compressed-tensors' NVFP4 names turned into ModelOpt's (`prepare_tensors`), each renamed
/// tensor moving to the end, as a re-inserted dict key: `weight_packed` → `weight`, and the
/// reciprocals of `weight_global_scale` → `weight_scale_2`, `input_global_scale` →
/// `input_scale` (unless a tensor of the new name exists).
fn ct_to_modelopt(entries: &mut Vec<Entry>) -> Result<(), ConvertError> {
    let names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    for old in names {
        let (new, inverse) = if let Some(b) = old.strip_suffix(".weight_packed") {
            (format!("{b}.weight"), false)
        } else if let Some(b) = old.strip_suffix(".weight_global_scale") {
            (format!("{b}.weight_scale_2"), true)
        } else if let Some(b) = old.strip_suffix(".input_global_scale") {
            (format!("{b}.input_scale"), true)
        } else {
            continue;
        };
        if entries.iter().any(|e| e.name == new) {
            continue;
        }
        let Some(i) = entries.iter().position(|e| e.name == old) else {
            continue;
        };
        let mut e = entries.remove(i);
        if inverse {
            // `1.0 / scale.float()`, in f32.
            let v = e.expr.eval_f32().map_err(|err| terr(&old, err.0))?;
            let shape = e.expr.shape().to_vec();
            e.expr = Expr::constant(v.iter().map(|x| 1.0f32 / x).collect(), shape);
            e.dtype = StDtype::F32;
        }
        e.name = new;
        entries.push(e);
    }
    Ok(())
}

/// `_generate_nvfp4_tensors`: every `<m>.weight` with a 2-D `<m>.weight_scale` is repacked
/// into GGML NVFP4 (values `[rows, cols]`), in model order; its `weight_scale_2` and
/// `input_scale` follow as F32 tensors unless one value equal to 1. Experts stored one per
/// tensor (`….experts.E.{gate,up,down}_proj.weight`) are gathered per layer and projection
/// and stacked (`[n_expert, rows, cols]`, per-expert factors `[n_expert]`) when the
/// `n_experts`-th arrives, or after every other weight when fewer do. The consumed tensors
/// and every `k_scale` / `v_scale` leave `entries`. compressed-tensors' layout is first
/// renamed to ModelOpt's.
pub fn nvfp4(entries: &mut Vec<Entry>, cfg: &Nvfp4Config) -> Result<Vec<Nvfp4Out>, ConvertError> {
    if cfg.compressed_tensors {
        ct_to_modelopt(entries)?;
    }
    let find = |entries: &Vec<Entry>, n: &str| entries.iter().position(|e| e.name == n);
    let read = |e: &Entry| -> Result<StTensor, ConvertError> {
        e.expr
            .as_read()
            .cloned()
            .ok_or_else(|| terr(&e.name, "NVFP4 data must be a plain tensor"))
    };
    let mut out = Vec::new();
    let mut consumed: Vec<String> = Vec::new();
    // Experts by (layer, projection), in first-seen order.
    let mut experts: Vec<((u64, &'static str), ExpertParts)> = Vec::new();
    for e in entries.iter() {
        if !e.name.ends_with(".weight") {
            continue;
        }
        let scale_name = e.name.replace(".weight", ".weight_scale");
        let Some(si) = find(entries, &scale_name) else {
            continue;
        };
        if entries[si].expr.shape().len() < 2 {
            continue;
        }
        let (w, s) = (read(e)?, read(&entries[si])?);
        let (rows, nb) = nvfp4_pair(&w, &s)?;
        consumed.push(e.name.clone());
        consumed.push(scale_name);
        let factor_names = [
            (e.name.replace(".weight", ".weight_scale_2"), ".scale"),
            (e.name.replace(".weight", ".input_scale"), ".input_scale"),
        ];
        for (n, _) in &factor_names {
            if find(entries, n).is_some() {
                consumed.push(n.clone());
            }
        }
        if let Some((bid, proj, id)) = expert_of(&e.name) {
            let s2 = factor_sum(entries, &factor_names[0].0)?;
            let inp = factor_sum(entries, &factor_names[1].0)?;
            let key = (bid, proj);
            let at = match experts.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    experts.push((key, Vec::new()));
                    experts.len() - 1
                }
            };
            experts[at].1.push((id, w, s, s2, inp));
            if cfg.n_experts > 0 && experts[at].1.len() as u64 >= cfg.n_experts {
                let (_, parts) = experts.remove(at);
                out.push(flush_experts(bid, proj, parts, cfg)?);
            }
            continue;
        }
        let n_head = match cfg.qk_heads {
            Some((n, _)) if e.name.ends_with("q_proj.weight") => Some(n),
            Some((n, kv)) if e.name.ends_with("k_proj.weight") => {
                Some(kv.filter(|kv| *kv != n).unwrap_or(n))
            }
            _ => None,
        };
        if let Some(n) = n_head {
            if n == 0 || rows % n != 0 || (rows / n) % 2 != 0 {
                return Err(terr(
                    &e.name,
                    format!("{rows} rows cannot be split into {n} heads of two halves"),
                ));
            }
        }
        let shape = vec![rows, nb * NVFP4_SUB as u64];
        let too_large = |_| terr(&s.name, "shape too large");
        let source = Nvfp4Rows {
            name: e.name.clone(),
            parts: vec![(w.clone(), s.clone())],
            rows: usize::try_from(rows).map_err(too_large)?,
            nb: usize::try_from(nb).map_err(too_large)?,
            n_head: n_head.map(|n| n as usize),
        };
        let weight = Expr::packed(
            GgmlType::NVFP4,
            shape,
            Packed::new(source),
            vec![w.clone(), s.clone()],
        );
        let mut scales = Vec::new();
        for (n, suffix) in factor_names {
            let Some(i) = find(entries, &n) else {
                continue;
            };
            let x = entries[i].expr.clone();
            let numel: u64 = x.shape().iter().product();
            let v = x.eval_f32().map_err(|err| terr(&n, err.0))?;
            // `_scale_is_trivial`: one value within 1e-6 of 1 (summed in f32, as torch).
            if numel <= 1 && (v.iter().sum::<f32>() as f64 - 1.0).abs() < 1e-6 {
                continue;
            }
            scales.push((suffix, x.reshape(&n, vec![numel])?));
        }
        out.push(Nvfp4Out {
            a16: cfg.a16(&e.name),
            name: e.name.clone(),
            weight,
            scales,
        });
    }
    for ((bid, proj), parts) in experts {
        out.push(flush_experts(bid, proj, parts, cfg)?);
    }
    entries.retain(|e| {
        !consumed.contains(&e.name)
            && !e.name.ends_with(".k_scale")
            && !e.name.ends_with(".v_scale")
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ggufkit::quantizers::dequantize_rows;

    /// E2M1 code → value.
    fn e2m1(c: u8) -> f32 {
        const V: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        let v = V[(c & 7) as usize];
        if c & 8 != 0 {
            -v
        } else {
            v
        }
    }

    /// A repacked NVFP4 block dequantizes (with GGML's kernel) to the ModelOpt values
    /// `e2m1(code) · e4m3(scale)` (the scale's sign bit dropped), element by element.
    #[test]
    fn nvfp4_repack_keeps_every_value() {
        use crate::hf::expr::f8_e4m3_to_f32;
        let codes: Vec<u8> = (0..32u8).map(|k| k.wrapping_mul(73) ^ 0x3c).collect();
        let scales = [0x38u8, 0x41, 0xb0, 0x2a];
        let mut block = [0u8; NVFP4_BLOCK];
        nvfp4_block(&scales, &codes, &mut block);
        let mut got = [0f32; 64];
        dequantize_rows(GgmlType::NVFP4, &block, &mut got).unwrap();
        for (i, g) in got.iter().enumerate() {
            let c = (codes[i / 2] >> (4 * (i % 2))) & 0x0f;
            let want = e2m1(c) * f8_e4m3_to_f32(scales[i / 16] & 0x7f);
            assert_eq!(*g, want, "element {i}");
        }
    }

    /// A repacked block dequantizes (with GGML's kernel) to the checkpoint's values
    /// `e2m1(code) · 2^(e − 127)`, element by element.
    #[test]
    fn mxfp4_repack_keeps_every_value() {
        let codes: Vec<u8> = (0..16u8).map(|k| k.wrapping_mul(37) ^ 0x5a).collect();
        for e in [100u8, 127, 130] {
            let mut block = [0u8; MXFP4_BLOCK];
            mxfp4_block(e, &codes, &mut block);
            let mut got = [0f32; 32];
            dequantize_rows(GgmlType::MXFP4, &block, &mut got).unwrap();
            for (i, g) in got.iter().enumerate() {
                let c = (codes[i / 2] >> (4 * (i % 2))) & 0x0f;
                let want = e2m1(c) * 2f32.powi(e as i32 - 127);
                assert_eq!(*g, want, "e {e} element {i}");
            }
        }
    }
}
