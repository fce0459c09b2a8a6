//! Lazy tensor expressions: what `convert_hf_to_gguf.py` records with its lazy torch
//! tensors, evaluated only when the GGUF writer asks for a tensor's bytes.
//!
//! An [`Expr`] knows its shape (PyTorch order, outermost first) and its working element
//! type at plan time; [`Expr::eval`] computes the values. The working types follow the
//! converter: a source tensor that is neither F16 nor F32 is upcast to F32 as it is read,
//! F16 stays F16 (so arithmetic on an F16 checkpoint rounds to F16, as torch does). A BF16
//! source is *kept* as BF16 bits through pure moves ([`Work::Bf16`]): its values are
//! exactly the F32 values the converter works with, and keeping the bits lets a BF16→BF16
//! conversion stay a copy. Any arithmetic widens it to F32 first.
//!
//! [`Materialize`] is the [`Derive`] the IR holds: an expression plus the output type.

use std::sync::Arc;

use ggufkit::ir::{
    ComputeValues, DataError, Derive, Elements, Encode, F32Values, FileKey, Packed, Rows, Stage,
    TensorData,
};
use ggufkit::quantizers::{dequantize_rows, f16_to_f32, f32_to_f16, quantize_rows, GgmlType};

use super::intquant::IntDequant;
use super::safetensors::{StDtype, StTensor};
use super::torch_math::{
    torch_bilinear_align_corners_f32, torch_exp_f32, torch_softplus_f16, torch_softplus_f32,
    torch_sqrt_f32,
};
use crate::ConvertError;

/// Element representation while transforming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// f32 values.
    F32,
    /// IEEE binary16 bits (an F16 source, kept in F16 as torch keeps it).
    F16,
    /// bfloat16 bits of values the converter holds as F32 (exact).
    Bf16,
}

impl Work {
    fn size(self) -> usize {
        match self {
            Work::F32 => 4,
            Work::F16 | Work::Bf16 => 2,
        }
    }
}

/// Computed values: the element type and the little-endian bytes.
pub struct Values {
    /// Element type of `bytes`.
    pub work: Work,
    /// Little-endian elements.
    pub bytes: Vec<u8>,
}

impl Values {
    fn f32s(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.bytes.len() / self.work.size()];
        decode(self.work, &self.bytes, &mut out);
        out
    }

    fn into_f32(self) -> Values {
        if self.work == Work::F32 {
            return self;
        }
        Values {
            work: Work::F32,
            bytes: f32_bytes(&self.f32s()),
        }
    }
}

/// Widens little-endian `work` elements to f32 (`out.len()` elements), with the quantizers'
/// f16/bf16 rows.
fn decode(work: Work, bytes: &[u8], out: &mut [f32]) {
    let ty = match work {
        Work::F32 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            return;
        }
        Work::F16 => GgmlType::F16,
        Work::Bf16 => GgmlType::BF16,
    };
    let row = ggufkit::quantizers::traits(ty)
        .dequantize
        .expect("f16 and bf16 have a row conversion");
    row(&bytes[..out.len() * 2], out);
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// The operations.
enum Op {
    /// A safetensors tensor.
    Read(StTensor),
    /// Values made by the converter (rope factors).
    Const(Arc<Vec<f32>>),
    /// FP8 `weight.float() * scale` with the scale broadcast or repeated per block.
    Dequant {
        weight: Expr,
        scale: Expr,
        block: Option<Vec<u64>>,
    },
    /// The llama q/k row permutation (`LlamaModel.permute`).
    PermuteHeads { input: Expr, n_head: u64 },
    /// Output row `i` is input row `map[i]` (rows along the outermost dimension; the
    /// elements of a 1-D tensor). The q/k/v regroupings of GPT-NeoX and Falcon.
    GatherRows { input: Expr, map: Arc<Vec<u64>> },
    /// Swap of the two innermost dimensions (a 2-D transpose, or one per leading index:
    /// `transpose(-1, -2)`).
    Transpose(Expr),
    /// `torch.stack(dim=0)`.
    Stack(Vec<Expr>),
    /// `narrow(axis, start, len)`.
    Narrow {
        input: Expr,
        axis: usize,
        start: u64,
        len: u64,
    },
    /// `x + value` (Gemma's norm shift).
    AddScalar { input: Expr, value: f32 },
    /// Every `step`-th index of `axis` from `start` (`x[..., start::step, ...]`).
    Strided {
        input: Expr,
        axis: usize,
        start: u64,
        step: u64,
    },
    /// The same elements under another shape (`reshape`, `squeeze`, `unsqueeze`).
    Reshape(Expr),
    /// Zero rows appended along the outermost dimension (`torch.cat([x, zeros])`, Gemma 3n's
    /// embeddings padded to the vocabulary), in the input's working type.
    PadRows(Expr),
    /// `-exp(x)` (Mamba's `A = -exp(A_log)`), in F16 for F16 inputs and F32 otherwise.
    NegExp(Expr),
    /// `softplus(x)` (beta 1, threshold 20: Gemma 4's audio scales), in F16 for F16 inputs
    /// and F32 otherwise, over the whole tensor as torch's loops split it.
    Softplus(Expr),
    /// Row `i` (of the outermost dimension) times `factors[i]`, in F16 for F16 inputs and
    /// F32 otherwise (Falcon-H1's multipliers).
    MulRows { input: Expr, factors: Arc<Vec<f32>> },
    /// A `from × from` grid of pixels with their channels innermost (`[1, from·from, C]`)
    /// resized to `to × to` in F32, as torch's bilinear `align_corners=True` kernel does.
    Bilinear { input: Expr, from: u64, to: u64 },
    /// `a (op) b`, elementwise over two tensors of one shape, in F16 when both are F16 and
    /// in F32 otherwise (torch's type promotion; the reference's BF16 tensors are F32 by
    /// the time it computes).
    Binary { op: BinOp, a: Expr, b: Expr },
    /// `torch.sqrt(x)`, in F16 for F16 inputs and F32 otherwise.
    Sqrt(Expr),
    /// Already-quantized source blocks moved into GGML type `ty`'s layout (MXFP4 experts,
    /// NVFP4 weights): written as they are; their values are the blocks dequantized.
    Packed {
        ty: GgmlType,
        data: Packed,
        inputs: Vec<StTensor>,
    },
    /// A GPTQ or compressed-tensors `pack-quantized` weight, dequantized to F32.
    Int(Arc<IntDequant>),
}

/// An elementwise operation of two tensors ([`Expr::binary`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (true division).
    Div,
}

impl BinOp {
    /// The operation on two f32 values: one IEEE float32 operation, rounded once, as
    /// torch's CPU kernels compute it (widened halves included).
    fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

/// A node of an expression.
pub struct Node {
    op: Op,
    shape: Vec<u64>,
    work: Work,
}

/// A shared expression.
#[derive(Clone)]
pub struct Expr(Arc<Node>);

fn terr(name: &str, problem: String) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem,
    }
}

impl Expr {
    fn new(op: Op, shape: Vec<u64>, work: Work) -> Expr {
        Expr(Arc::new(Node { op, shape, work }))
    }

    /// A source tensor, upcast to F32 unless it is F16, F32 or BF16.
    pub fn read(t: StTensor) -> Expr {
        let work = match t.dtype {
            StDtype::F16 => Work::F16,
            StDtype::Bf16 => Work::Bf16,
            _ => Work::F32,
        };
        let shape = t.shape.clone();
        Expr::new(Op::Read(t), shape, work)
    }

    /// Constant F32 values of the given shape.
    pub fn constant(values: Vec<f32>, shape: Vec<u64>) -> Expr {
        Expr::new(Op::Const(Arc::new(values)), shape, Work::F32)
    }

    /// Already-quantized data of GGML type `ty` (see [`ggufkit::ir::Packed`]), whose values
    /// have the (element) `shape`; `inputs` are the source tensors it reads.
    pub fn packed(ty: GgmlType, shape: Vec<u64>, data: Packed, inputs: Vec<StTensor>) -> Expr {
        Expr::new(Op::Packed { ty, data, inputs }, shape, Work::F32)
    }

    /// An integer-quantized weight dequantized to F32 (GPTQ, `pack-quantized`).
    pub fn int_dequant(d: Arc<IntDequant>) -> Expr {
        let shape = d.shape();
        Expr::new(Op::Int(d), shape, Work::F32)
    }

    /// The GGML type and the bytes, when this is already-quantized data.
    pub fn as_packed(&self) -> Option<(GgmlType, &Packed)> {
        match &self.0.op {
            Op::Packed { ty, data, .. } => Some((*ty, data)),
            _ => None,
        }
    }

    /// Shape, outermost first.
    pub fn shape(&self) -> &[u64] {
        &self.0.shape
    }

    /// Working element type.
    pub fn work(&self) -> Work {
        self.0.work
    }

    /// Calls `f` with every source tensor this expression reads.
    pub fn for_each_source(&self, f: &mut dyn FnMut(&StTensor)) {
        match &self.0.op {
            Op::Read(t) => f(t),
            Op::Const(_) => {}
            Op::Packed { inputs, .. } => inputs.iter().for_each(f),
            Op::Int(d) => d.for_each_source(f),
            Op::Dequant { weight, scale, .. } => {
                weight.for_each_source(f);
                scale.for_each_source(f);
            }
            Op::PermuteHeads { input, .. }
            | Op::GatherRows { input, .. }
            | Op::Transpose(input)
            | Op::Narrow { input, .. }
            | Op::AddScalar { input, .. }
            | Op::Reshape(input)
            | Op::PadRows(input)
            | Op::Strided { input, .. }
            | Op::NegExp(input)
            | Op::Softplus(input)
            | Op::Bilinear { input, .. }
            | Op::Sqrt(input)
            | Op::MulRows { input, .. } => input.for_each_source(f),
            Op::Stack(parts) => parts.iter().for_each(|p| p.for_each_source(f)),
            Op::Binary { a, b, .. } => {
                a.for_each_source(f);
                b.for_each_source(f);
            }
        }
    }

    /// The source tensor, when this is a plain read.
    pub fn as_read(&self) -> Option<&StTensor> {
        match &self.0.op {
            Op::Read(t) => Some(t),
            _ => None,
        }
    }

    /// FP8 dequantization: `weight.float() * scale`, the scale repeated `block` times per
    /// dimension (then cut to the weight's shape) or broadcast from trailing size-1 dims.
    pub fn dequant(
        name: &str,
        weight: Expr,
        scale: Expr,
        block: Option<Vec<u64>>,
    ) -> Result<Expr, ConvertError> {
        let ws = weight.shape().to_vec();
        let ss = scale.shape();
        let ok = match &block {
            Some(b) => {
                ss.len() == ws.len()
                    && b.len() <= ws.len()
                    && ws.iter().zip(ss).enumerate().all(|(i, (w, s))| {
                        let bi = i as isize - (ws.len() - b.len()) as isize;
                        let bs = if bi >= 0 { b[bi as usize].max(1) } else { 1 };
                        s.checked_mul(bs).is_some_and(|full| full >= *w)
                    })
            }
            None => {
                ss.len() <= ws.len() && ss.iter().enumerate().all(|(i, s)| *s == 1 || *s == ws[i])
            }
        };
        if !ok {
            return Err(terr(
                name,
                format!(
                    "scale shape {ss:?} does not fit weight shape {ws:?}{}",
                    block
                        .as_ref()
                        .map(|b| format!(" with block size {b:?}"))
                        .unwrap_or_default()
                ),
            ));
        }
        Ok(Expr::new(
            Op::Dequant {
                weight,
                scale,
                block,
            },
            ws,
            Work::F32,
        ))
    }

    /// The elementwise product `a.float() * b.float()` of two tensors of one shape, or of a
    /// tensor and a one-element one (torch's broadcast), in F32. It is FP8 dequantization's
    /// arithmetic with a full-size (or one-element) scale: one rounding per element.
    pub fn mul(name: &str, a: Expr, b: Expr) -> Result<Expr, ConvertError> {
        let count = |e: &Expr| e.shape().iter().try_fold(1u64, |n, d| n.checked_mul(*d));
        let (na, nb) = (count(&a), count(&b));
        let (big, small) = if na >= nb { (a, b) } else { (b, a) };
        let same = big.shape() == small.shape();
        let single = count(&small) == Some(1);
        if !same && !single {
            return Err(terr(
                name,
                format!(
                    "cannot multiply shapes {:?} and {:?} elementwise",
                    big.shape(),
                    small.shape()
                ),
            ));
        }
        let small = if same {
            small
        } else {
            small.reshape(name, vec![1])?
        };
        Expr::dequant(name, big, small, None)
    }

    /// `x.float()`: the same values in F32 working type (arithmetic after it is in F32 even
    /// for an F16 tensor). Exact: the product with a one-element scale of 1.
    pub fn float(self, name: &str) -> Result<Expr, ConvertError> {
        if self.work() == Work::F32 {
            return Ok(self);
        }
        Expr::dequant(name, self, Expr::constant(vec![1.0], vec![1]), None)
    }

    /// Undoes HF's rotate-half layout of q/k rows: within each of `n_head` heads, the two
    /// halves of the rows are interleaved (`reshape(n, 2, hd/2, …).swapaxes(1, 2)`).
    pub fn permute_heads(self, name: &str, n_head: u64) -> Result<Expr, ConvertError> {
        let rows = self.shape().first().copied().unwrap_or(0);
        if n_head == 0 || rows % n_head != 0 || !(rows / n_head).is_multiple_of(2) {
            return Err(terr(
                name,
                format!("cannot split {rows} rows into {n_head} heads of even size for the rotary permutation"),
            ));
        }
        let (shape, work) = (self.shape().to_vec(), self.work());
        Ok(Expr::new(
            Op::PermuteHeads {
                input: self,
                n_head,
            },
            shape,
            work,
        ))
    }

    /// True when the expression only selects or reorders rows (the outermost dimension) of
    /// one source tensor: what a LoRA adapter can apply to `B` alone, since for `W = B·A`
    /// such an operation on `W` is the same operation on `B`.
    pub fn rows_only(&self) -> bool {
        match &self.0.op {
            Op::Read(_) => true,
            Op::PermuteHeads { input, .. } => input.rows_only(),
            Op::GatherRows { input, .. } => self.shape().len() >= 2 && input.rows_only(),
            Op::Narrow { input, axis, .. } => *axis == 0 && input.rows_only(),
            _ => false,
        }
    }

    /// Reorders the outermost dimension: output row `i` is input row `map[i]`. `map` must
    /// be a permutation of the rows.
    pub fn gather_rows(self, name: &str, map: Vec<u64>) -> Result<Expr, ConvertError> {
        let rows = self.shape().first().copied().unwrap_or(0);
        let mut seen = vec![false; map.len()];
        let ok = map.len() as u64 == rows
            && map.iter().all(|&r| {
                let fresh = r < rows && !seen[r as usize];
                if fresh {
                    seen[r as usize] = true;
                }
                fresh
            });
        if !ok {
            return Err(terr(
                name,
                format!(
                    "row regrouping does not fit a tensor of shape {:?}",
                    self.shape()
                ),
            ));
        }
        let (shape, work) = (self.shape().to_vec(), self.work());
        Ok(Expr::new(
            Op::GatherRows {
                input: self,
                map: Arc::new(map),
            },
            shape,
            work,
        ))
    }

    /// 2-D transpose.
    pub fn transpose(self, name: &str) -> Result<Expr, ConvertError> {
        let s = self.shape();
        if s.len() != 2 {
            return Err(terr(
                name,
                format!("cannot transpose a tensor of shape {s:?}"),
            ));
        }
        let (shape, work) = (vec![s[1], s[0]], self.work());
        Ok(Expr::new(Op::Transpose(self), shape, work))
    }

    /// `transpose(-1, -2)`: swaps the two innermost dimensions of a tensor of 2 or more
    /// dimensions (Llama 4's `[n_expert, n_in, n_out]` expert stacks).
    pub fn transpose_last2(self, name: &str) -> Result<Expr, ConvertError> {
        let s = self.shape();
        if s.len() < 2 {
            return Err(terr(
                name,
                format!("cannot swap the last two dimensions of shape {s:?}"),
            ));
        }
        let mut shape = s.to_vec();
        let n = shape.len();
        shape.swap(n - 1, n - 2);
        let work = self.work();
        Ok(Expr::new(Op::Transpose(self), shape, work))
    }

    /// Stacks equal-shaped tensors along a new leading dimension.
    pub fn stack(name: &str, parts: Vec<Expr>) -> Result<Expr, ConvertError> {
        let first = parts
            .first()
            .ok_or_else(|| terr(name, "nothing to stack".into()))?;
        if let Some(bad) = parts.iter().find(|p| p.shape() != first.shape()) {
            return Err(terr(
                name,
                format!(
                    "cannot stack tensors of shapes {:?} and {:?}",
                    first.shape(),
                    bad.shape()
                ),
            ));
        }
        let work = if parts.iter().all(|p| p.work() == first.work()) {
            first.work()
        } else {
            Work::F32
        };
        let mut shape = vec![parts.len() as u64];
        shape.extend_from_slice(first.shape());
        Ok(Expr::new(Op::Stack(parts), shape, work))
    }

    /// Concatenates tensors of equal trailing dimensions along their outermost one (a table
    /// stored in row shards). Stacking equal parts and concatenating them lay out the same
    /// bytes, so this is a stack whose shape counts the parts' rows.
    pub fn cat_rows(name: &str, parts: Vec<Expr>) -> Result<Expr, ConvertError> {
        let first = parts
            .first()
            .ok_or_else(|| terr(name, "nothing to concatenate".into()))?;
        let tail = first.shape().get(1..).unwrap_or(&[]).to_vec();
        let mut rows = 0u64;
        for p in &parts {
            let (lead, rest) = p
                .shape()
                .split_first()
                .ok_or_else(|| terr(name, "cannot concatenate the rows of a scalar".into()))?;
            if rest != tail.as_slice() {
                return Err(terr(
                    name,
                    format!(
                        "cannot concatenate the rows of shapes {:?} and {:?}",
                        first.shape(),
                        p.shape()
                    ),
                ));
            }
            rows = rows
                .checked_add(*lead)
                .ok_or_else(|| terr(name, "row count overflows".into()))?;
        }
        if parts.len() == 1 {
            return Ok(parts.into_iter().next().expect("one part"));
        }
        let same = parts.iter().all(|p| p.shape() == first.shape());
        let work = if parts.iter().all(|p| p.work() == first.work()) {
            first.work()
        } else {
            Work::F32
        };
        if same {
            // Equal parts: a plain stack, reshaped (the row-stack fast path applies).
            let stacked = Expr::stack(name, parts)?;
            let mut shape = vec![rows];
            shape.extend_from_slice(&tail);
            return stacked.reshape(name, shape);
        }
        let mut shape = vec![rows];
        shape.extend_from_slice(&tail);
        Ok(Expr::new(Op::Stack(parts), shape, work))
    }

    /// `narrow(axis, start, len)`; `axis` counts from the outermost dimension.
    pub fn narrow(
        self,
        name: &str,
        axis: usize,
        start: u64,
        len: u64,
    ) -> Result<Expr, ConvertError> {
        let s = self.shape();
        if axis >= s.len() || start.checked_add(len).is_none_or(|e| e > s[axis]) {
            return Err(terr(
                name,
                format!("cannot take [{start}, {start}+{len}) of axis {axis} of shape {s:?}"),
            ));
        }
        if start == 0 && len == s[axis] {
            return Ok(self);
        }
        let mut shape = s.to_vec();
        shape[axis] = len;
        let work = self.work();
        Ok(Expr::new(
            Op::Narrow {
                input: self,
                axis,
                start,
                len,
            },
            shape,
            work,
        ))
    }

    /// `x[..., start::step, ...]` along `axis` (counted from the outermost dimension).
    pub fn strided(
        self,
        name: &str,
        axis: usize,
        start: u64,
        step: u64,
    ) -> Result<Expr, ConvertError> {
        let s = self.shape();
        if axis >= s.len() || step == 0 || start >= s[axis] {
            return Err(terr(
                name,
                format!("cannot take {start}::{step} of axis {axis} of shape {s:?}"),
            ));
        }
        let mut shape = s.to_vec();
        shape[axis] = (s[axis] - start).div_ceil(step);
        let work = self.work();
        Ok(Expr::new(
            Op::Strided {
                input: self,
                axis,
                start,
                step,
            },
            shape,
            work,
        ))
    }

    /// `x + value`, in F16 for F16 inputs and F32 otherwise.
    pub fn add_scalar(self, value: f32) -> Expr {
        let shape = self.shape().to_vec();
        let work = if self.work() == Work::F16 {
            Work::F16
        } else {
            Work::F32
        };
        Expr::new(Op::AddScalar { input: self, value }, shape, work)
    }

    /// The same elements (row-major) under `shape`, which must hold as many.
    pub fn reshape(self, name: &str, shape: Vec<u64>) -> Result<Expr, ConvertError> {
        let count = |s: &[u64]| s.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
        if count(&shape).is_none() || count(&shape) != count(self.shape()) {
            return Err(terr(
                name,
                format!("cannot reshape {:?} to {shape:?}", self.shape()),
            ));
        }
        if shape == self.shape() {
            return Ok(self);
        }
        let work = self.work();
        Ok(Expr::new(Op::Reshape(self), shape, work))
    }

    /// Zero rows appended along the outermost dimension up to `rows` (`torch.cat` with a
    /// zero tensor of the same dtype); `rows` must not be below the current count.
    pub fn pad_rows(self, name: &str, rows: u64) -> Result<Expr, ConvertError> {
        let s = self.shape();
        match s.first() {
            Some(&n) if n == rows => Ok(self),
            Some(&n) if n < rows => {
                let mut shape = s.to_vec();
                shape[0] = rows;
                if shape
                    .iter()
                    .try_fold(1u64, |a, d| a.checked_mul(*d))
                    .is_none()
                {
                    return Err(terr(name, format!("cannot pad {s:?} to {rows} rows")));
                }
                let work = self.work();
                Ok(Expr::new(Op::PadRows(self), shape, work))
            }
            _ => Err(terr(name, format!("cannot pad {s:?} to {rows} rows"))),
        }
    }

    /// `squeeze()`: every dimension of size 1 removed.
    pub fn squeeze(self, name: &str) -> Result<Expr, ConvertError> {
        let shape: Vec<u64> = self.shape().iter().copied().filter(|&d| d != 1).collect();
        self.reshape(name, shape)
    }

    /// `x * value` (a Python float times a tensor: the value rounded to f32 first).
    pub fn mul_scalar(self, value: f64) -> Expr {
        let rows = self.shape().first().copied().unwrap_or(1) as usize;
        let rows = if self.shape().is_empty() { 1 } else { rows };
        self.mul_rows_unchecked(vec![value as f32; rows])
    }

    /// Row `i` of the outermost dimension times `factors[i]` (one factor per row).
    pub fn mul_rows(self, name: &str, factors: Vec<f32>) -> Result<Expr, ConvertError> {
        let rows = if self.shape().is_empty() {
            1
        } else {
            self.shape()[0]
        };
        if factors.len() as u64 != rows {
            return Err(terr(
                name,
                format!("{} row factors for shape {:?}", factors.len(), self.shape()),
            ));
        }
        Ok(self.mul_rows_unchecked(factors))
    }

    fn mul_rows_unchecked(self, factors: Vec<f32>) -> Expr {
        let shape = self.shape().to_vec();
        let work = if self.work() == Work::F16 {
            Work::F16
        } else {
            Work::F32
        };
        Expr::new(
            Op::MulRows {
                input: self,
                factors: Arc::new(factors),
            },
            shape,
            work,
        )
    }

    /// `-exp(x)` as torch computes it on the converter's working type: in F16 for an F16
    /// tensor, else in F32 (torch's float32 exp: [`torch_exp_f32`]).
    pub fn neg_exp(self) -> Expr {
        let shape = self.shape().to_vec();
        let work = if self.work() == Work::F16 {
            Work::F16
        } else {
            Work::F32
        };
        Expr::new(Op::NegExp(self), shape, work)
    }

    /// `softplus(x)` as torch computes it on the converter's working type: in F16 for an F16
    /// tensor, else in F32 ([`torch_softplus_f32`]).
    pub fn softplus(self) -> Expr {
        let shape = self.shape().to_vec();
        let work = if self.work() == Work::F16 {
            Work::F16
        } else {
            Work::F32
        };
        Expr::new(Op::Softplus(self), shape, work)
    }

    /// `F.interpolate(x.reshape(1, from, from, C).permute(0, 3, 1, 2).float(), size=(to, to),
    /// mode="bilinear", align_corners=True)` back in `[1, to·to, C]` layout: the square grid
    /// of a `[1, from·from, C]` table resized in F32 as torch computes it
    /// ([`torch_bilinear_align_corners_f32`]). `from` and `to` must be positive.
    pub fn bilinear_square(self, name: &str, from: u64, to: u64) -> Result<Expr, ConvertError> {
        let s = self.shape();
        let ok =
            s.len() == 3 && s[0] == 1 && from > 0 && to > 0 && from.checked_mul(from) == Some(s[1]);
        let out = to
            .checked_mul(to)
            .and_then(|n| n.checked_mul(s.get(2).copied().unwrap_or(0)).map(|_| n));
        match (ok, out) {
            (true, Some(n)) => {
                let shape = vec![1, n, s[2]];
                Ok(Expr::new(
                    Op::Bilinear {
                        input: self,
                        from,
                        to,
                    },
                    shape,
                    Work::F32,
                ))
            }
            _ => Err(terr(
                name,
                format!("cannot resize {s:?} as a {from}x{from} grid to {to}x{to}"),
            )),
        }
    }

    /// `a (op) b` elementwise, as torch computes it on two tensors of one shape: in F16 when
    /// both are F16 (each result widened, computed in f32 and rounded once to half), else in
    /// F32 (one IEEE float32 operation per element).
    pub fn binary(name: &str, op: BinOp, a: Expr, b: Expr) -> Result<Expr, ConvertError> {
        if a.shape() != b.shape() {
            return Err(terr(
                name,
                format!(
                    "cannot combine shapes {:?} and {:?} elementwise",
                    a.shape(),
                    b.shape()
                ),
            ));
        }
        let work = if a.work() == Work::F16 && b.work() == Work::F16 {
            Work::F16
        } else {
            Work::F32
        };
        let shape = a.shape().to_vec();
        Ok(Expr::new(Op::Binary { op, a, b }, shape, work))
    }

    /// `torch.sqrt(x)`: in F16 for an F16 tensor (the f32 square root rounded to half),
    /// else in F32 (MKL's vector square root: [`torch_sqrt_f32`]).
    pub fn sqrt(self) -> Expr {
        let shape = self.shape().to_vec();
        let work = if self.work() == Work::F16 {
            Work::F16
        } else {
            Work::F32
        };
        Expr::new(Op::Sqrt(self), shape, work)
    }

    /// One line describing the computation.
    pub fn describe(&self) -> String {
        match &self.0.op {
            Op::Read(t) => t.name.clone(),
            Op::Const(v) => format!("<{} generated values>", v.len()),
            Op::Packed { data, .. } => data.describe(),
            Op::Int(d) => d.describe(),
            Op::Dequant { weight, scale, .. } => {
                format!("dequant({}, {})", weight.describe(), scale.describe())
            }
            Op::PermuteHeads { input, n_head } => {
                format!("permute({}, heads={n_head})", input.describe())
            }
            Op::GatherRows { input, .. } => format!("regroup_rows({})", input.describe()),
            Op::Transpose(i) => format!("transpose({})", i.describe()),
            Op::Stack(p) => format!(
                "stack({}{})",
                p.first().map(|e| e.describe()).unwrap_or_default(),
                if p.len() > 1 {
                    format!(" … {} tensors", p.len())
                } else {
                    String::new()
                }
            ),
            Op::Narrow {
                input,
                axis,
                start,
                len,
            } => format!(
                "{}[axis {axis}: {start}..{}]",
                input.describe(),
                start + len
            ),
            Op::AddScalar { input, value } => format!("({} + {value})", input.describe()),
            Op::Strided {
                input,
                axis,
                start,
                step,
            } => format!("{}[axis {axis}: {start}::{step}]", input.describe()),
            Op::Reshape(input) => format!("reshape({}, {:?})", input.describe(), self.shape()),
            Op::PadRows(input) => format!("pad_rows({}, {})", input.describe(), self.shape()[0]),
            Op::NegExp(input) => format!("-exp({})", input.describe()),
            Op::Softplus(input) => format!("softplus({})", input.describe()),
            Op::Bilinear { input, from, to } => {
                format!("bilinear({}, {from}x{from} -> {to}x{to})", input.describe())
            }
            Op::MulRows { input, .. } => format!("scale_rows({})", input.describe()),
            Op::Binary { op, a, b } => {
                format!("({} {} {})", a.describe(), op.symbol(), b.describe())
            }
            Op::Sqrt(input) => format!("sqrt({})", input.describe()),
        }
    }

    /// A canonical description of the values: equal for two expressions exactly when they
    /// compute the same values, the same operations with the same shapes and working types
    /// on the same source bytes (two conversions of one directory map its files separately,
    /// so reads compare by file path and byte range). The output engine compares these keys
    /// to compute the values once for several outputs.
    pub fn key(&self) -> String {
        let mut out = String::new();
        self.write_key(&mut out);
        out
    }

    fn write_key(&self, out: &mut String) {
        use std::fmt::Write;
        let node = &*self.0;
        let _ = write!(out, "{:?}{:?}", node.shape, node.work);
        let sub = |out: &mut String, tag: &str, inputs: &[&Expr]| {
            out.push_str(tag);
            out.push('(');
            for (i, e) in inputs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                e.write_key(out);
            }
            out.push(')');
        };
        match &node.op {
            Op::Read(t) => {
                let _ = write!(
                    out,
                    "read({:?},{},{},{:?})",
                    FileKey::of(&t.file),
                    t.offset,
                    t.len,
                    t.dtype
                );
            }
            Op::Packed { ty, data, inputs } => {
                let _ = write!(out, "packed({ty},{}", data.describe());
                for t in inputs {
                    let _ = write!(
                        out,
                        ",read({:?},{},{})",
                        FileKey::of(&t.file),
                        t.offset,
                        t.len
                    );
                }
                out.push(')');
            }
            Op::Int(d) => out.push_str(&d.key()),
            Op::Const(v) => {
                out.push_str("const(");
                for x in v.iter() {
                    let _ = write!(out, "{:x},", x.to_bits());
                }
                out.push(')');
            }
            Op::Dequant {
                weight,
                scale,
                block,
            } => sub(out, &format!("dequant{block:?}"), &[weight, scale]),
            Op::PermuteHeads { input, n_head } => sub(out, &format!("permute{n_head}"), &[input]),
            Op::GatherRows { input, map } => sub(out, &format!("gather{map:?}"), &[input]),
            Op::Transpose(input) => sub(out, "transpose", &[input]),
            Op::Stack(parts) => sub(out, "stack", &parts.iter().collect::<Vec<_>>()),
            Op::Narrow {
                input,
                axis,
                start,
                len,
            } => sub(out, &format!("narrow{axis},{start},{len}"), &[input]),
            Op::AddScalar { input, value } => {
                sub(out, &format!("add{:x}", value.to_bits()), &[input])
            }
            Op::Strided {
                input,
                axis,
                start,
                step,
            } => sub(out, &format!("strided{axis},{start},{step}"), &[input]),
            Op::Reshape(input) => sub(out, "reshape", &[input]),
            Op::PadRows(input) => sub(out, "padrows", &[input]),
            Op::NegExp(input) => sub(out, "negexp", &[input]),
            Op::Softplus(input) => sub(out, "softplus", &[input]),
            Op::Bilinear { input, from, to } => sub(out, &format!("bilinear{from},{to}"), &[input]),
            Op::MulRows { input, factors } => {
                let bits: Vec<u32> = factors.iter().map(|f| f.to_bits()).collect();
                sub(out, &format!("mulrows{bits:x?}"), &[input])
            }
            Op::Binary { op, a, b } => sub(out, &format!("binary{op:?}"), &[a, b]),
            Op::Sqrt(input) => sub(out, "sqrt", &[input]),
        }
    }

    /// The source tensor names this reads, in order.
    pub fn sources(&self, out: &mut Vec<String>) {
        match &self.0.op {
            Op::Read(t) => out.push(t.name.clone()),
            Op::Const(_) => {}
            Op::Packed { inputs, .. } => out.extend(inputs.iter().map(|t| t.name.clone())),
            Op::Int(d) => d.for_each_source(&mut |t| out.push(t.name.clone())),
            Op::Dequant { weight, scale, .. } => {
                weight.sources(out);
                scale.sources(out);
            }
            Op::PermuteHeads { input, .. }
            | Op::GatherRows { input, .. }
            | Op::Transpose(input)
            | Op::Narrow { input, .. }
            | Op::AddScalar { input, .. }
            | Op::Reshape(input)
            | Op::PadRows(input)
            | Op::Strided { input, .. }
            | Op::NegExp(input)
            | Op::Softplus(input)
            | Op::Bilinear { input, .. }
            | Op::Sqrt(input)
            | Op::MulRows { input, .. } => input.sources(out),
            Op::Stack(p) => p.iter().for_each(|e| e.sources(out)),
            Op::Binary { a, b, .. } => {
                a.sources(out);
                b.sources(out);
            }
        }
    }

    /// Computes the values as f32.
    pub fn eval_f32(&self) -> Result<Vec<f32>, DataError> {
        Ok(self.eval()?.f32s())
    }

    /// Computes the values.
    pub fn eval(&self) -> Result<Values, DataError> {
        let node = &*self.0;
        let esize = node.work.size();
        let f32_values = |f: Vec<f32>| Values {
            work: Work::F32,
            bytes: f32_bytes(&f),
        };
        Ok(match &node.op {
            Op::Read(t) => read_values(t)?,
            Op::Const(v) => f32_values(v.to_vec()),
            Op::Int(d) => {
                let rows: Vec<usize> = (0..node.shape[0] as usize).collect();
                f32_values(d.rows_f32(&rows)?)
            }
            Op::Packed { ty, data, .. } => {
                let raw = data.compute()?;
                let mut f = vec![0f32; node.shape.iter().product::<u64>() as usize];
                dequantize_rows(*ty, &raw, &mut f).map_err(|e| DataError(e.to_string()))?;
                f32_values(f)
            }
            Op::Dequant {
                weight,
                scale,
                block,
            } => f32_values(dequant(weight, scale, block.as_deref())?),
            Op::PermuteHeads { input, n_head } => {
                let v = input.eval()?;
                let bytes = permute_heads(&v.bytes, node.shape[0] as usize, *n_head as usize);
                Values { bytes, ..v }
            }
            Op::GatherRows { input, map } => {
                let v = input.eval()?;
                let row = v.bytes.len() / map.len().max(1);
                let mut out = Vec::with_capacity(v.bytes.len());
                for &r in map.iter() {
                    let r = r as usize;
                    out.extend_from_slice(&v.bytes[r * row..(r + 1) * row]);
                }
                Values { bytes: out, ..v }
            }
            Op::Transpose(input) => {
                let v = input.eval()?;
                let n = node.shape.len();
                let (rows, cols) = (node.shape[n - 1] as usize, node.shape[n - 2] as usize);
                let bytes = transpose_matrices(&v.bytes, rows, cols, esize);
                Values { bytes, ..v }
            }
            Op::Stack(parts) => {
                let mut bytes =
                    Vec::with_capacity(node.shape.iter().product::<u64>() as usize * esize);
                for p in parts {
                    let mut v = p.eval()?;
                    if v.work != node.work {
                        v = v.into_f32();
                    }
                    bytes.extend_from_slice(&v.bytes);
                }
                Values {
                    work: node.work,
                    bytes,
                }
            }
            Op::Narrow {
                input,
                axis,
                start,
                len,
            } => {
                let v = input.eval()?;
                let picks: Vec<usize> = (*start as usize..(*start + *len) as usize).collect();
                let bytes = pick_along(&v.bytes, input.shape(), *axis, &picks, esize);
                Values { bytes, ..v }
            }
            Op::Strided {
                input,
                axis,
                start,
                step,
            } => {
                let v = input.eval()?;
                let picks: Vec<usize> = (0..node.shape[*axis] as usize)
                    .map(|k| *start as usize + k * *step as usize)
                    .collect();
                let bytes = pick_along(&v.bytes, input.shape(), *axis, &picks, esize);
                Values { bytes, ..v }
            }
            Op::Reshape(input) => input.eval()?,
            Op::PadRows(input) => {
                let mut v = input.eval()?;
                // Zero is all-zero bits in f32, f16 and bf16 alike.
                v.bytes
                    .resize(node.shape.iter().product::<u64>() as usize * esize, 0);
                v
            }
            Op::MulRows { input, factors } => {
                let v = input.eval()?;
                let rows = factors.len().max(1);
                let per_row = ((v.bytes.len() / v.work.size()) / rows).max(1);
                map_elements(v, |i, x| x * factors[(i / per_row).min(rows - 1)])
            }
            Op::NegExp(input) => map_elements(input.eval()?, neg_exp),
            Op::Softplus(input) => softplus(input.eval()?),
            Op::Bilinear { input, from, to } => {
                let c = node.shape[2] as usize;
                f32_values(torch_bilinear_align_corners_f32(
                    &input.eval()?.f32s(),
                    *from as usize,
                    *to as usize,
                    c,
                ))
            }
            Op::AddScalar { input, value } => map_elements(input.eval()?, |_, x| x + *value),
            Op::Sqrt(input) => sqrt_values(input.eval()?),
            Op::Binary { op, a, b } => binary_values(*op, node.work, a.eval()?, b.eval()?),
        })
    }
}

/// `softplus(x)` over the whole tensor, as torch's vectorized loop splits it: in half for a
/// half tensor, else in f32.
fn softplus(v: Values) -> Values {
    if v.work == Work::F16 {
        let h: Vec<u16> = v
            .bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let bytes = torch_softplus_f16(&h)
            .into_iter()
            .flat_map(u16::to_le_bytes)
            .collect();
        Values {
            work: Work::F16,
            bytes,
        }
    } else {
        Values {
            work: Work::F32,
            bytes: f32_bytes(&torch_softplus_f32(&v.f32s())),
        }
    }
}

/// `torch.sqrt` of every element: a half is widened, its square root taken by the CPU's
/// correctly rounded instruction (a negative gives the x86 default NaN, negative) and
/// rounded to half; a float32 element goes to MKL's vector square root, which
/// [`torch_sqrt_f32`] reproduces (not always the correctly rounded root).
fn sqrt_values(v: Values) -> Values {
    if v.work == Work::F16 {
        map_elements(v, |_, x| x.sqrt())
    } else {
        map_elements(v, |_, x| torch_sqrt_f32(x))
    }
}

/// `a (op) b` elementwise in working type `work` (F16: both halves widened, one f32
/// operation, rounded to half; else one f32 operation). A NaN operand comes through quieted,
/// the first one when both are, as the x86 instruction (and so torch) gives it.
fn binary_values(op: BinOp, work: Work, a: Values, b: Values) -> Values {
    let bv = b.f32s();
    let a = if work == Work::F16 { a } else { a.into_f32() };
    map_elements(a, |i, x| op.apply(x, bv[i]))
}

/// Applies `f(index, x)` to every element as torch's arithmetic does: a half is widened,
/// computed in f32 and rounded back to half; anything else is computed in f32.
fn map_elements(v: Values, f: impl Fn(usize, f32) -> f32) -> Values {
    if v.work == Work::F16 {
        let mut out = Vec::with_capacity(v.bytes.len());
        for (i, c) in v.bytes.chunks_exact(2).enumerate() {
            let x = f16_to_f32(u16::from_le_bytes([c[0], c[1]]));
            out.extend_from_slice(&f32_to_f16(f(i, x)).to_le_bytes());
        }
        Values {
            work: Work::F16,
            bytes: out,
        }
    } else {
        let out: Vec<f32> = v
            .f32s()
            .into_iter()
            .enumerate()
            .map(|(i, x)| f(i, x))
            .collect();
        Values {
            work: Work::F32,
            bytes: f32_bytes(&out),
        }
    }
}

/// The rows of `n_head` heads reordered from halves (`x0..x_{d/2}, y0..`) to interleaved
/// pairs (`x0, y0, x1, y1, …`): `rows` rows of `bytes`, `rows / n_head` per head.
fn permute_heads(bytes: &[u8], rows: usize, n_head: usize) -> Vec<u8> {
    let row = bytes.len() / rows.max(1);
    let hd = rows / n_head;
    let half = hd / 2;
    let mut out = vec![0u8; bytes.len()];
    for h in 0..n_head {
        for j in 0..half {
            for i in 0..2 {
                let dst = h * hd + 2 * j + i;
                let src = h * hd + i * half + j;
                out[dst * row..(dst + 1) * row].copy_from_slice(&bytes[src * row..(src + 1) * row]);
            }
        }
    }
    out
}

/// Each `cols × rows` matrix of elements of `esize` bytes in `bytes`, transposed to
/// `rows × cols`.
fn transpose_matrices(bytes: &[u8], rows: usize, cols: usize, esize: usize) -> Vec<u8> {
    let mat = (rows * cols * esize).max(1);
    let mut out = vec![0u8; bytes.len()];
    for (src_m, dst_m) in bytes.chunks_exact(mat).zip(out.chunks_exact_mut(mat)) {
        for r in 0..rows {
            for c in 0..cols {
                let src = (r * cols + c) * esize;
                let dst = (c * rows + r) * esize;
                dst_m[dst..dst + esize].copy_from_slice(&src_m[src..src + esize]);
            }
        }
    }
    out
}

/// The slices at indices `picks` of axis `axis` of a tensor of shape `shape` (elements of
/// `esize` bytes), in that order, for every index of the axes before it.
fn pick_along(bytes: &[u8], shape: &[u64], axis: usize, picks: &[usize], esize: usize) -> Vec<u8> {
    let outer = shape[..axis].iter().product::<u64>() as usize;
    let inner = shape[axis + 1..].iter().product::<u64>() as usize * esize;
    let n_in = shape[axis] as usize;
    let mut out = Vec::with_capacity(outer * picks.len() * inner);
    for o in 0..outer {
        for &i in picks {
            let at = (o * n_in + i) * inner;
            out.extend_from_slice(&bytes[at..at + inner]);
        }
    }
    out
}

/// `-exp(x)` as torch computes `-torch.exp(x)` on a CPU tensor (for a half, [`map_elements`]
/// rounds the f32 result: exp rounded to half, then a sign flip, as torch's half arithmetic
/// gives it, since rounding is symmetric).
fn neg_exp(_: usize, x: f32) -> f32 {
    -torch_exp_f32(x)
}

/// Reads a source tensor into its working type.
fn read_values(t: &StTensor) -> Result<Values, DataError> {
    let b = t.bytes()?;
    let f32s = |f: &dyn Fn(&[u8]) -> f32| -> Values {
        let size = t.dtype.size() as usize;
        let v: Vec<f32> = b.chunks_exact(size).map(f).collect();
        Values {
            work: Work::F32,
            bytes: f32_bytes(&v),
        }
    };
    Ok(match t.dtype {
        StDtype::F32 => Values {
            work: Work::F32,
            bytes: b.to_vec(),
        },
        StDtype::F16 => Values {
            work: Work::F16,
            bytes: b.to_vec(),
        },
        StDtype::Bf16 => Values {
            work: Work::Bf16,
            bytes: b.to_vec(),
        },
        StDtype::F64 => f32s(&|c| f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32),
        StDtype::I64 => f32s(&|c| i64::from_le_bytes(c.try_into().expect("8 bytes")) as f32),
        StDtype::I32 => f32s(&|c| i32::from_le_bytes(c.try_into().expect("4 bytes")) as f32),
        StDtype::I16 => f32s(&|c| i16::from_le_bytes([c[0], c[1]]) as f32),
        StDtype::U8 => f32s(&|c| c[0] as f32),
        StDtype::I8 => f32s(&|c| c[0] as i8 as f32),
        StDtype::Bool => f32s(&|c| if c[0] != 0 { 1.0 } else { 0.0 }),
        StDtype::F8E4M3 => f32s(&|c| f8_e4m3_to_f32(c[0])),
        StDtype::F8E5M2 => f32s(&|c| f16_to_f32((c[0] as u16) << 8)),
        StDtype::F8E8M0 => f32s(&|c| f8_e8m0_to_f32(c[0])),
    })
}

/// FP8 E4M3 ("fn": bias 7, no infinities, S.1111.111 is NaN) → f32, exactly.
pub fn f8_e4m3_to_f32(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0f32 } else { 1.0 };
    let e = ((b >> 3) & 0x0f) as i32;
    let m = (b & 0x07) as f32;
    if e == 0x0f && b & 0x07 == 0x07 {
        return f32::NAN;
    }
    let mag = if e == 0 {
        m / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + m / 8.0) * 2f32.powi(e - 7)
    };
    sign * mag
}

/// FP8 E8M0 (an unsigned power of two, 0xFF is NaN) → f32, exactly.
pub fn f8_e8m0_to_f32(b: u8) -> f32 {
    if b == 0xff {
        return f32::NAN;
    }
    if b == 0 {
        return f32::from_bits(0x0040_0000); // 2^-127, an f32 subnormal
    }
    f32::from_bits((b as u32) << 23)
}

fn dequant(weight: &Expr, scale: &Expr, block: Option<&[u64]>) -> Result<Vec<f32>, DataError> {
    let w = weight.eval()?.f32s();
    let s = scale.eval()?.f32s();
    let ws: Vec<usize> = weight.shape().iter().map(|d| *d as usize).collect();
    let ss: Vec<usize> = scale.shape().iter().map(|d| *d as usize).collect();
    let nd = ws.len();
    // Per weight dimension: how a weight index maps to a scale index.
    let (sdims, div): (Vec<usize>, Vec<usize>) = match block {
        Some(b) => (
            ss.clone(),
            (0..nd)
                .map(|i| {
                    let bi = i as isize - (nd - b.len()) as isize;
                    if bi >= 0 {
                        b[bi as usize].max(1) as usize
                    } else {
                        1
                    }
                })
                .collect(),
        ),
        None => {
            // Trailing unsqueeze: scale dims align with the leading weight dims.
            let mut d = ss.clone();
            d.resize(nd, 1);
            (d, vec![1; nd])
        }
    };
    let mut sstrides = vec![1usize; nd];
    for i in (0..nd.saturating_sub(1)).rev() {
        sstrides[i] = sstrides[i + 1] * sdims[i + 1];
    }
    let mut idx = vec![0usize; nd];
    let mut out = Vec::with_capacity(w.len());
    for x in &w {
        let mut si = 0;
        for d in 0..nd {
            let k = if sdims[d] == 1 { 0 } else { idx[d] / div[d] };
            si += k * sstrides[d];
        }
        let sc = *s
            .get(si)
            .ok_or_else(|| DataError("fp8 scale index out of range".into()))?;
        out.push(*x * sc);
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < ws[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// The [`Derive`] of an output tensor: evaluate, then convert to the output type.
pub struct Materialize {
    /// The values.
    pub expr: Expr,
    /// Output type (F32, F16, BF16, Q8_0, TQ1_0, TQ2_0).
    pub out: GgmlType,
}

/// An expression's values, for the output engine ([`F32Values::Computed`]).
struct ExprValues(Expr);

impl ComputeValues for ExprValues {
    fn compute(&self) -> Result<(Elements, Vec<u8>), DataError> {
        let v = self.0.eval()?;
        let elements = match v.work {
            Work::F32 => Elements::F32,
            Work::F16 => Elements::F16,
            Work::Bf16 => Elements::Bf16,
        };
        Ok((elements, v.bytes))
    }

    fn release(&self) {
        self.0
            .for_each_source(&mut |t| t.file.release(t.offset, t.len));
    }
}

/// The name of gguf-py's encoder in [`Encode::Reader`].
const GGUF_PY: &str = "gguf-py quants.quantize";

impl Derive for Materialize {
    /// The expression's values encoded by [`encode_f32`], unless the converter keeps them in
    /// their own 16-bit type (an F16 expression written as F16, BF16 as BF16: a copy, not
    /// an encoding of f32 values). A plain read of an F32 tensor is those bytes.
    fn f32_stage(&self) -> Option<Stage> {
        if is_same(self.expr.work(), self.out) && self.out != GgmlType::F32 {
            return None;
        }
        let shape = self.expr.shape();
        let n_per_row = shape.last().copied().unwrap_or(1).max(1) as usize;
        let rows_per_matrix = match shape.len() {
            0 | 1 => 1,
            n => shape[n - 2].max(1) as usize,
        };
        let values = match self.expr.as_read() {
            Some(t) if t.dtype == StDtype::F32 => F32Values::Data {
                data: TensorData::Mapped {
                    file: t.file.clone(),
                    offset: t.offset,
                    len: t.len,
                },
                ty: GgmlType::F32,
            },
            _ => F32Values::Computed {
                key: self.expr.key(),
                source: Arc::new(ExprValues(self.expr.clone())),
            },
        };
        let encode = if self.out == GgmlType::F32 {
            Encode::AsF32
        } else {
            Encode::Reader {
                name: GGUF_PY,
                to: self.out,
                n_per_row: shape.last().copied().unwrap_or(1) as usize,
                encode: encode_f32,
            }
        };
        Some(Stage {
            values,
            n_per_row,
            rows_per_matrix,
            encode,
        })
    }

    fn describe(&self) -> String {
        format!("{} → {}", self.expr.describe(), self.out)
    }

    fn compute(&self) -> Result<Vec<u8>, DataError> {
        let n_per_row = self.expr.shape().last().copied().unwrap_or(1) as usize;
        // A plain read of an F32/F16/BF16 tensor converts from the mapping without a copy.
        if let Some(t) = self.expr.as_read() {
            if matches!(t.dtype, StDtype::F32 | StDtype::F16 | StDtype::Bf16) {
                return encode(self.expr.work(), &t.bytes()?, self.out, n_per_row);
            }
        }
        finish(self.expr.eval()?, self.out, n_per_row)
    }

    fn release(&self) {
        self.expr
            .for_each_source(&mut |t| t.file.release(t.offset, t.len));
    }

    /// A dequantized 2-D weight read straight from the file (FP8 `weight * scale`) is
    /// computed a range of rows at a time: each output row needs only its own weight row and
    /// the (small) scale, so a large FP8 matrix never has its whole F32 form in memory.
    ///
    /// Per-expert matrices stacked into one `*_exps` tensor (plain F32/F16/BF16 reads) are
    /// computed by rows too: each output row is one row of one expert's matrix, so the
    /// stacked tensor never exists whole in its source or F32 form, only the output rows of
    /// a piece. So is a single plain read (a BF16 embedding to Q8_0): its source pages are
    /// released a piece at a time and its F32 form is never whole.
    fn rows(&self) -> Option<Rows> {
        if let Some(st) = self.row_stack() {
            return Some(Rows {
                count: st.parts.len().checked_mul(st.rows)?,
                out_bytes: ggufkit::quantizers::row_size(self.out, st.cols)?,
                in_bytes: st.cols.checked_mul(st.size)?,
            });
        }
        if let Some((d, _)) = self.row_int() {
            let cols = d.shape()[1] as usize;
            return Some(Rows {
                count: d.shape()[0] as usize,
                out_bytes: ggufkit::quantizers::row_size(self.out, cols)?,
                in_bytes: cols.checked_mul(4)?,
            });
        }
        let ((w, _), _) = self.row_dequant()?;
        let cols = usize::try_from(*w.shape.get(1)?).ok()?;
        let count = usize::try_from(w.shape[0]).ok()?;
        let out_bytes = ggufkit::quantizers::row_size(self.out, cols)?;
        Some(Rows {
            count,
            out_bytes,
            in_bytes: cols.checked_mul(w.dtype.size() as usize + 4)?,
        })
    }

    fn compute_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        if let Some(st) = self.row_stack() {
            let mut out = Vec::new();
            let mut r = range.start;
            while r < range.end {
                // The rows of one expert in this range.
                let (part, first) = (r / st.rows, r % st.rows);
                let last = st.rows.min(first + (range.end - r));
                let t = st.parts[part]
                    .as_read()
                    .ok_or_else(|| DataError("stacked part is not a read".into()))?;
                let row = st.cols * st.size;
                let bytes = t
                    .range(first * row, (last - first) * row)
                    .map_err(|e| DataError(format!("{}: rows out of the tensor: {e}", t.name)))?;
                out.extend(encode(self.expr.work(), &bytes, self.out, st.cols)?);
                r += last - first;
            }
            return Ok(out);
        }
        if let Some((d, n_head)) = self.row_int() {
            let shape = d.shape();
            let (n_rows, cols) = (shape[0] as usize, shape[1] as usize);
            let rows: Vec<usize> = range.map(|r| permuted_row(r, n_rows, n_head)).collect();
            return encode_f32(&d.rows_f32(&rows)?, self.out, cols);
        }
        let ((w, (scale, block)), n_head) = self
            .row_dequant()
            .ok_or_else(|| DataError(format!("{} cannot be computed by rows", self.describe())))?;
        let cols = w.shape[1] as usize;
        let size = w.dtype.size() as usize;
        let sv = scale.eval()?.f32s();
        let ss: Vec<usize> = scale.shape().iter().map(|d| *d as usize).collect();
        // Scale row and column of weight element (r, c), as `dequant` maps them in 2-D.
        let (s_rows, s_cols) = match ss.len() {
            0 => (1, 1),
            1 => (ss[0], 1),
            _ => (ss[0], ss[1]),
        };
        let (div_r, div_c) = match block {
            Some(b) if b.len() >= 2 => (
                b[b.len() - 2].max(1) as usize,
                b[b.len() - 1].max(1) as usize,
            ),
            Some(b) if b.len() == 1 => (1, b[0].max(1) as usize),
            _ => (1, 1),
        };
        // The input row of output row `r`: itself, or through the q/k head permutation
        // (`reshape(n_head, 2, half, cols).swapaxes(1, 2)`).
        let n_rows = w.shape[0] as usize;
        let source = |r: usize| permuted_row(r, n_rows, n_head);
        let mut out = Vec::with_capacity(range.len() * cols);
        for r in range {
            let src = source(r);
            let part = StTensor {
                shape: vec![1, cols as u64],
                offset: w.offset + src * cols * size,
                len: cols * size,
                ..w.clone()
            };
            if src >= n_rows {
                return Err(DataError("fp8 row out of the weight".into()));
            }
            let row = read_values(&part)?.f32s();
            let sr = if s_rows == 1 { 0 } else { src / div_r };
            // The row's scales: one for the whole row, or one per `div_c` columns.
            let scales = sv
                .get(sr * s_cols..(sr + 1) * s_cols)
                .filter(|s| s_cols == 1 || s.len() * div_c >= cols)
                .ok_or_else(|| DataError("fp8 scale index out of range".into()))?;
            if s_cols == 1 {
                out.extend(row.iter().map(|x| x * scales[0]));
            } else {
                for (xs, &s) in row.chunks(div_c).zip(scales) {
                    out.extend(xs.iter().map(|x| x * s));
                }
            }
        }
        encode_f32(&out, self.out, cols)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        if let Some(st) = self.row_stack() {
            let row = st.cols * st.size;
            let mut r = range.start;
            while r < range.end {
                let (part, first) = (r / st.rows, r % st.rows);
                let last = st.rows.min(first + (range.end - r));
                if let Some(t) = st.parts[part].as_read() {
                    t.file.release(t.offset + first * row, (last - first) * row);
                }
                r += last - first;
            }
            return;
        }
        // A permuted tensor's rows come from anywhere in their heads: released whole.
        if let Some(((w, _), None)) = self.row_dequant() {
            let row = w.shape[1] as usize * w.dtype.size() as usize;
            w.file
                .release(w.offset + range.start * row, range.len() * row);
        }
    }
}

/// Equal 2-D matrices of one float dtype stacked along a new leading dimension, or one plain
/// read of a float tensor (a stack of one part), computed by rows (see
/// [`Materialize::row_stack`]).
struct RowStack<'a> {
    /// The stacked matrices (plain reads), or the one read.
    parts: &'a [Expr],
    /// Rows of one part (all its leading dimensions).
    rows: usize,
    /// Elements per row.
    cols: usize,
    /// Bytes per element.
    size: usize,
}

/// The input row of output row `r` of `n_rows`: itself, or through the q/k head permutation
/// (`reshape(n_head, 2, half, cols).swapaxes(1, 2)`).
fn permuted_row(r: usize, n_rows: usize, n_head: Option<usize>) -> usize {
    match n_head {
        None => r,
        Some(n) => {
            let per = n_rows / n;
            let half = per / 2;
            let (h, rem) = (r / per, r % per);
            h * per + (rem % 2) * half + rem / 2
        }
    }
}

/// A dequantization computed by rows: the 2-D weight, its scale and the block size.
type RowDequant<'a> = (&'a StTensor, (&'a Expr, Option<&'a [u64]>));

impl Materialize {
    /// The integer weight (and the q/k head count) when this is a dequantized GPTQ or
    /// `pack-quantized` weight, possibly head-permuted, to a type whose rows are encoded
    /// independently.
    fn row_int(&self) -> Option<(&IntDequant, Option<usize>)> {
        let (inner, n_head) = match &self.expr.0.op {
            Op::PermuteHeads { input, n_head } => (input, Some(usize::try_from(*n_head).ok()?)),
            _ => (&self.expr, None),
        };
        let Op::Int(d) = &inner.0.op else {
            return None;
        };
        let shape = d.shape();
        let (rows, cols) = (
            usize::try_from(shape[0]).ok()?,
            usize::try_from(shape[1]).ok()?,
        );
        if let Some(n) = n_head {
            if n == 0 || rows % n != 0 || (rows / n) % 2 != 0 {
                return None;
            }
        }
        ggufkit::quantizers::row_size(self.out, cols)?;
        Some((d, n_head))
    }

    /// Plain reads of F32/F16/BF16 data, each output row one source row: a stack of equal
    /// 2-D matrices of one dtype (the stacked experts of a checkpoint that stores them per
    /// expert), or a single read of any rank (its rows are all its leading dimensions), the
    /// common case of a weight converted to another type (a BF16 embedding written as Q8_0
    /// is never whole in F32).
    fn row_stack(&self) -> Option<RowStack<'_>> {
        let (parts, single) = match &self.expr.0.op {
            Op::Stack(parts) => (&parts[..], false),
            Op::Read(_) => (std::slice::from_ref(&self.expr), true),
            _ => return None,
        };
        let first = parts.first()?.as_read()?;
        if (first.shape.is_empty() || (!single && first.shape.len() != 2))
            || !matches!(first.dtype, StDtype::F32 | StDtype::F16 | StDtype::Bf16)
            || parts[0].work() != self.expr.work()
        {
            return None;
        }
        let same = |p: &Expr| {
            p.as_read()
                .is_some_and(|t| t.dtype == first.dtype && t.shape == first.shape)
        };
        if !parts.iter().all(same) {
            return None;
        }
        let (lead, last) = first.shape.split_at(first.shape.len() - 1);
        let rows = lead
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(usize::try_from(*d).ok()?))?;
        let cols = usize::try_from(last[0]).ok().filter(|c| *c > 0)?;
        let size = first.dtype.size() as usize;
        if rows.checked_mul(cols)?.checked_mul(size)? != first.len {
            return None;
        }
        ggufkit::quantizers::row_size(self.out, cols)?;
        Some(RowStack {
            parts,
            rows,
            cols,
            size,
        })
    }

    /// The weight and (scale, block) when this is `dequant(read 2-D weight, scale of at most 2
    /// dims)` to a type whose rows are encoded independently.
    fn row_dequant(&self) -> Option<(RowDequant<'_>, Option<usize>)> {
        let (inner, n_head) = match &self.expr.0.op {
            Op::PermuteHeads { input, n_head } => (input, Some(usize::try_from(*n_head).ok()?)),
            _ => (&self.expr, None),
        };
        let Op::Dequant {
            weight,
            scale,
            block,
        } = &inner.0.op
        else {
            return None;
        };
        let w = weight.as_read()?;
        if w.shape.len() != 2 || scale.shape().len() > 2 || w.shape[1] == 0 {
            return None;
        }
        if block.as_ref().is_some_and(|b| b.len() > 2) {
            return None;
        }
        if let Some(n) = n_head {
            let rows = usize::try_from(w.shape[0]).ok()?;
            if n == 0 || rows % n != 0 || (rows / n) % 2 != 0 {
                return None;
            }
        }
        ggufkit::quantizers::row_size(self.out, w.shape[1] as usize)?;
        Some(((w, (scale, block.as_deref())), n_head))
    }
}

/// Converts working values to the output type, as gguf-py's `quants.quantize` does.
pub fn finish(v: Values, out: GgmlType, n_per_row: usize) -> Result<Vec<u8>, DataError> {
    if is_same(v.work, out) {
        return Ok(v.bytes);
    }
    encode(v.work, &v.bytes, out, n_per_row)
}

fn is_same(work: Work, out: GgmlType) -> bool {
    matches!(
        (work, out),
        (Work::F32, GgmlType::F32) | (Work::F16, GgmlType::F16) | (Work::Bf16, GgmlType::BF16)
    )
}

/// [`finish`] of values given as bytes. To a float type it goes through a small f32 buffer,
/// never a whole-tensor f32 copy; block types need the f32 rows.
fn encode(work: Work, bytes: &[u8], out: GgmlType, n_per_row: usize) -> Result<Vec<u8>, DataError> {
    if is_same(work, out) {
        return Ok(bytes.to_vec());
    }
    let Some(out_size) = float_size(out) else {
        let mut f = vec![0f32; bytes.len() / work.size()];
        decode(work, bytes, &mut f);
        return encode_f32(&f, out, n_per_row);
    };
    const CHUNK: usize = 4096;
    let mut buf = [0f32; CHUNK];
    let mut dst = vec![0u8; bytes.len() / work.size() * out_size];
    for (src, dst) in bytes
        .chunks(CHUNK * work.size())
        .zip(dst.chunks_mut(CHUNK * out_size))
    {
        let buf = &mut buf[..src.len() / work.size()];
        decode(work, src, buf);
        encode_float(buf, out, dst);
    }
    Ok(dst)
}

/// Bytes per element of the float output types.
fn float_size(out: GgmlType) -> Option<usize> {
    match out {
        GgmlType::F32 => Some(4),
        GgmlType::F16 | GgmlType::BF16 => Some(2),
        _ => None,
    }
}

/// f32 values → F32/F16/BF16 little-endian bytes (`dst` sized for them); f16 and bf16 with
/// the quantizers' rows, which are gguf-py's (and ggml's) conversions.
fn encode_float(f: &[f32], out: GgmlType, dst: &mut [u8]) {
    if out == GgmlType::F32 {
        for (d, x) in dst.chunks_exact_mut(4).zip(f) {
            d.copy_from_slice(&x.to_le_bytes());
        }
        return;
    }
    let row = match ggufkit::quantizers::traits(out).quantize {
        Some(ggufkit::quantizers::Quantizer::Total(row)) => row,
        _ => unreachable!("f16 and bf16 have a total row conversion"),
    };
    row(f, dst, None);
}

/// Converts f32 values to the output type, as gguf-py's `quants.quantize` does (the tail of
/// [`finish`] once the values are f32; the batch converter calls it on shared f32 values).
pub fn encode_f32(f: &[f32], out: GgmlType, n_per_row: usize) -> Result<Vec<u8>, DataError> {
    if let Some(size) = float_size(out) {
        let mut dst = vec![0u8; f.len() * size];
        encode_float(f, out, &mut dst);
        return Ok(dst);
    }
    let rs = ggufkit::quantizers::row_size(out, n_per_row).ok_or_else(|| {
        DataError(format!(
            "row length {n_per_row} is not a whole number of {out} blocks"
        ))
    })?;
    let mut dst = vec![0u8; f.len() / n_per_row.max(1) * rs];
    quantize_rows(out, f, &mut dst, n_per_row, None).map_err(|e| DataError(e.to_string()))?;
    Ok(dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_decoders_are_exact() {
        assert_eq!(f8_e4m3_to_f32(0x38), 1.0);
        assert_eq!(f8_e4m3_to_f32(0x7e), 448.0);
        assert_eq!(f8_e4m3_to_f32(0x01), 2f32.powi(-9));
        assert!(f8_e4m3_to_f32(0x7f).is_nan());
        assert_eq!(f8_e4m3_to_f32(0xb8), -1.0);
        assert_eq!(f8_e8m0_to_f32(127), 1.0);
        assert_eq!(f8_e8m0_to_f32(0), 2f32.powi(-127));
    }

    fn konst(v: &[f32], shape: &[u64]) -> Expr {
        Expr::constant(v.to_vec(), shape.to_vec())
    }

    fn vals(e: &Expr) -> Vec<f32> {
        e.eval().unwrap().f32s()
    }

    #[test]
    fn reshape_keeps_the_elements_and_strided_takes_every_other() {
        let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let r = konst(&x, &[6, 2]).reshape("t", vec![2, 3, 2]).unwrap();
        assert_eq!(r.shape(), [2, 3, 2]);
        assert_eq!(vals(&r), x);
        assert!(konst(&x, &[6, 2]).reshape("t", vec![5, 2]).is_err());
        assert!(konst(&x, &[6, 2]).reshape("t", vec![u64::MAX, 2]).is_err());
        // x[:, ::2, :] and x[:, 1::2, :] of [2, 3, 2]: rows 0, 2 and row 1 of each matrix.
        let even = r.clone().strided("t", 1, 0, 2).unwrap();
        assert_eq!(even.shape(), [2, 2, 2]);
        assert_eq!(vals(&even), [0., 1., 4., 5., 6., 7., 10., 11.]);
        let odd = r.clone().strided("t", 1, 1, 2).unwrap();
        assert_eq!(odd.shape(), [2, 1, 2]);
        assert_eq!(vals(&odd), [2., 3., 8., 9.]);
        // The last axis: x[..., 1::2].
        let cols = r.clone().strided("t", 2, 1, 2).unwrap();
        assert_eq!(vals(&cols), [1., 3., 5., 7., 9., 11.]);
        assert!(r.clone().strided("t", 3, 0, 2).is_err());
        assert!(r.clone().strided("t", 1, 0, 0).is_err());
        assert!(r.strided("t", 1, 3, 1).is_err());
    }

    #[test]
    fn permutation_interleaves_head_halves() {
        // 2 heads of 4 rows, 1 column: rows 0..8.
        let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let p = konst(&x, &[8, 1]).permute_heads("t", 2).unwrap();
        assert_eq!(vals(&p), [0., 2., 1., 3., 4., 6., 5., 7.]);
        assert!(konst(&x, &[8, 1]).permute_heads("t", 3).is_err());
    }

    #[test]
    fn moves_and_stacking() {
        let a = konst(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        assert_eq!(
            vals(&a.clone().transpose("t").unwrap()),
            [1., 4., 2., 5., 3., 6.]
        );
        let s = Expr::stack("t", vec![a.clone(), a.clone()]).unwrap();
        assert_eq!(s.shape(), &[2, 2, 3]);
        let n = s.narrow("t", 1, 1, 1).unwrap();
        assert_eq!(vals(&n), [4., 5., 6., 4., 5., 6.]);
        assert_eq!(vals(&a.add_scalar(1.0))[0], 2.0);
    }

    #[test]
    fn batched_transpose_swaps_the_innermost_dimensions() {
        // Two 2x3 matrices.
        let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let t = konst(&x, &[2, 2, 3]).transpose_last2("t").unwrap();
        assert_eq!(t.shape(), &[2, 3, 2]);
        assert_eq!(vals(&t), [0., 3., 1., 4., 2., 5., 6., 9., 7., 10., 8., 11.]);
        assert!(konst(&[1.0], &[1]).transpose_last2("t").is_err());
        let empty = konst(&[], &[2, 0, 3]).transpose_last2("t").unwrap();
        assert!(vals(&empty).is_empty());
    }

    #[test]
    fn keys_tell_values_apart() {
        let a = konst(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let b = konst(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        assert_eq!(a.key(), b.key());
        let t = |e: &Expr| e.clone().transpose("t").unwrap();
        assert_eq!(t(&a).key(), t(&b).key());
        assert_ne!(t(&a).key(), a.key());
        assert_ne!(
            a.clone().add_scalar(1.0).key(),
            a.clone().add_scalar(2.0).key()
        );
        let c = konst(&[1., 2., 3., 4., 5., 7.], &[2, 3]);
        assert_ne!(a.key(), c.key());
        assert_ne!(a.key(), konst(&[1., 2., 3., 4., 5., 6.], &[3, 2]).key());
    }

    /// `-exp(x)` over every non-NaN bfloat16 input (as F32) and every non-NaN float16 input
    /// (in F16) hashes like torch's in the reference environment
    /// on MKL's default AVX-512 path (`conformance/make_exp_table.py`).
    /// A batch norm fold, `w / sqrt(v + 1e-5)` then `b - m * a`, on eight values with a
    /// negative and a zero variance, equals torch 2.15's float32 and float16 results bit for
    /// bit (values and results printed by torch in the reference environment).
    #[test]
    fn binary_and_sqrt_match_torch() {
        let f32s = |bits: [u32; 8]| Values {
            work: Work::F32,
            bytes: bits.iter().flat_map(|b| b.to_le_bytes()).collect(),
        };
        let f16s = |bits: [u16; 8]| Values {
            work: Work::F16,
            bytes: bits.iter().flat_map(|b| b.to_le_bytes()).collect(),
        };
        let fold = |w: Values, b: Values, m: Values, v: Values| {
            let work = w.work;
            let root = sqrt_values(map_elements(v, |_, x| x + 1e-5));
            let a = binary_values(BinOp::Div, work, w, root);
            let a_again = Values {
                work: a.work,
                bytes: a.bytes.clone(),
            };
            let ma = binary_values(BinOp::Mul, work, m, a_again);
            let shift = binary_values(BinOp::Sub, work, b, ma);
            (a.bytes, shift.bytes)
        };
        let (a, b) = fold(
            f32s([
                0xbf4d4b61, 0xbfa98498, 0xbe7e5282, 0x3ed74499, 0x3f9169f9, 0x3de0adc0, 0xbf0d7a4b,
                0xbf48e75e,
            ]),
            f32s([
                0x3f3fadce, 0x3fd14092, 0x3e8ba859, 0xbf9dddb7, 0xbf7550de, 0x3fcccd6d, 0x3e4fc06a,
                0xbfddb698,
            ]),
            f32s([
                0xbc0920ba, 0xbdee3a8b, 0xbd80e0d2, 0xbd47e31f, 0xbd92162a, 0x3d62a9f0, 0xbbceb859,
                0xbd716e59,
            ]),
            f32s([
                0x3f826721, 0x3fa70e97, 0x3eae94a4, 0xbe800000, 0x3fa77627, 0x0, 0x3f87d6d2,
                0x3aebde0d,
            ]),
        );
        assert_eq!(
            a,
            f32s([
                0xbf4b64ac, 0xbf946245, 0xbed9c373, 0x7fc00000, 0x3f7e4322, 0x420ac4d3, 0xbf095589,
                0xc19396f1
            ])
            .bytes
        );
        assert_eq!(
            b,
            f32s([
                0x3f3dfa02, 0x3fbffde9, 0x3e7be874, 0x7fc00000, 0xbf632dd4, 0xbea3b950, 0x3e4c493c,
                0xc03473a8
            ])
            .bytes
        );
        let (a, b) = fold(
            f16s([
                0xba6a, 0xbd4c, 0xb3f3, 0x36ba, 0x3c8b, 0x2f05, 0xb86c, 0xba47,
            ]),
            f16s([
                0x39fd, 0x3e8a, 0x345d, 0xbcef, 0xbbab, 0x3e66, 0x327e, 0xbeee,
            ]),
            f16s([
                0xa049, 0xaf72, 0xac07, 0xaa3f, 0xac91, 0x2b15, 0x9e76, 0xab8b,
            ]),
            f16s([0x3c13, 0x3d38, 0x3575, 0xb400, 0x3d3c, 0x0, 0x3c3f, 0x175f]),
        );
        assert_eq!(
            a,
            f16s([0xba5c, 0xbca3, 0xb6ce, 0xfe00, 0x3bf2, 0x5055, 0xb84b, 0xcc9c]).bytes
        );
        assert_eq!(
            b,
            f16s([0x39ef, 0x3e00, 0x33df, 0xfe00, 0xbb1a, 0xb514, 0x3262, 0xc1a4]).bytes
        );
    }

    #[test]
    fn neg_exp_matches_torch() {
        use sha2::{Digest, Sha256};
        let hex = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let bf: Vec<f32> = (0..=u16::MAX)
            .map(|b| f32::from_bits((b as u32) << 16))
            .filter(|x| !x.is_nan())
            .collect();
        let n = bf.len() as u64;
        let v = konst(&bf, &[n]).neg_exp().eval().unwrap();
        assert_eq!(v.work, Work::F32);
        assert_eq!(
            hex(&Sha256::digest(&v.bytes)),
            "c016398f22200106a5e3d9c3ad55efbc6cc7e324de9feba43d186d8260f57479"
        );
        let h: Vec<u8> = (0..=u16::MAX)
            .filter(|b| !f16_to_f32(*b).is_nan())
            .flat_map(|b| b.to_le_bytes())
            .collect();
        let out = map_elements(
            Values {
                work: Work::F16,
                bytes: h,
            },
            neg_exp,
        )
        .bytes;
        assert_eq!(
            hex(&Sha256::digest(&out)),
            "f39ad7c906e2ee62a19033c927a2730618c82a1d92af2a62ddccb97116fe2b30"
        );
    }

    #[test]
    fn reshapes_keep_the_elements() {
        let x = konst(&[1., 2., 3., 4., 5., 6.], &[3, 1, 2]);
        let s = x.clone().squeeze("t").unwrap();
        assert_eq!(s.shape(), &[3, 2]);
        assert_eq!(vals(&s), [1., 2., 3., 4., 5., 6.]);
        let r = s.reshape("t", vec![6, 1]).unwrap();
        assert_eq!(r.shape(), &[6, 1]);
        assert!(x.reshape("t", vec![4]).is_err());
        let e = konst(&[0.0, 1.0], &[2]).neg_exp();
        assert_eq!(vals(&e), [-1.0, -std::f32::consts::E]);
        let m = konst(&[1., 2., 3., 4.], &[2, 2]).mul_scalar(0.5);
        assert_eq!(vals(&m), [0.5, 1.0, 1.5, 2.0]);
        let r = m.mul_rows("t", vec![2.0, 10.0]).unwrap();
        assert_eq!(vals(&r), [1.0, 2.0, 15.0, 20.0]);
        assert!(r.mul_rows("t", vec![1.0]).is_err());
    }

    #[test]
    fn blockwise_fp8_scales_repeat() {
        let w = konst(&[1.0; 12], &[3, 4]);
        let s = konst(&[2.0, 3.0, 5.0, 7.0], &[2, 2]);
        let d = Expr::dequant("t", w, s, Some(vec![2, 2])).unwrap();
        assert_eq!(vals(&d), [2., 2., 3., 3., 2., 2., 3., 3., 5., 5., 7., 7.]);
        let w = konst(&[1.0; 4], &[2, 2]);
        let per_row = Expr::dequant("t", w, konst(&[2.0, 3.0], &[2]), None).unwrap();
        assert_eq!(vals(&per_row), [2., 2., 3., 3.]);
    }
}
