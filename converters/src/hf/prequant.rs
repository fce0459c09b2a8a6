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
        let (codes, exps) = (self.blocks.bytes(), self.scales.bytes());
        let row_codes = self.nb * 16;
        let mut out = vec![0u8; range.len() * self.nb * MXFP4_BLOCK];
        for (o, dst) in range.zip(out.chunks_exact_mut(self.nb * MXFP4_BLOCK)) {
            let s = self.source(o);
            let (c, e) = match (
                codes.get(s * row_codes..(s + 1) * row_codes),
                exps.get(s * self.nb..(s + 1) * self.nb),
            ) {
                (Some(c), Some(e)) => (c, e),
                _ => {
                    return Err(DataError(format!(
                        "{}: row {o} lies outside its source",
                        self.describe()
                    )))
                }
            };
            for ((d, c), &e) in dst
                .chunks_exact_mut(MXFP4_BLOCK)
                .zip(c.chunks_exact(16))
                .zip(e)
            {
                mxfp4_block(e, c, d);
            }
        }
        Ok(out)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        // Interleaved rows share pages with the other half: only a plain range is released.
        if self.step == 1 && !range.is_empty() {
            let first = self.source(range.start);
            let n = range.len();
            let codes = self.nb * 16;
            self.blocks
                .file
                .release(self.blocks.offset + first * codes, n * codes);
            self.scales
                .file
                .release(self.scales.offset + first * self.nb, n * self.nb);
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
