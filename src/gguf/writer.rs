//! The GGUF serialiser: header and infos computed up front, tensor data streamed after.

use super::keys;
use std::borrow::Cow;
use std::io::Write;

use ggufkit_quantizers::GgmlType;

use super::error::GgufError;
use super::metadata::Metadata;
use super::reader::tensor_nbytes;
use super::value::Value;
use super::{align_up, ByteOrder, DEFAULT_ALIGNMENT, MAX_DIMS, MAX_TENSOR_NAME};

/// What the writer needs to know about a tensor before its data exists.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorHeader {
    /// Name.
    pub name: String,
    /// Dimensions in GGUF order.
    pub dims: Vec<u64>,
    /// Element type.
    pub ty: GgmlType,
}

/// The complete plan of a file: the serialised header and where every tensor goes.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Header, KVs, tensor infos and padding: everything before the data section.
    pub header: Vec<u8>,
    /// Length of the header before its padding (what gguf-py writes for `--vocab-only`).
    pub header_len: usize,
    /// Alignment used.
    pub alignment: u64,
    /// Offset of each tensor relative to the data section.
    pub offsets: Vec<u64>,
    /// Byte size of each tensor.
    pub sizes: Vec<u64>,
    /// Total file size.
    pub file_size: u64,
}

impl Layout {
    /// Absolute offset of the data section.
    pub fn data_offset(&self) -> u64 {
        self.header.len() as u64
    }
}

fn push_str(out: &mut Vec<u8>, s: &[u8], o: ByteOrder) {
    o.put(out, (s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// Nesting depth of an array (1 for an array of scalars).
fn array_depth(a: &super::ArrayValue) -> usize {
    match a {
        super::ArrayValue::Array(items) => 1 + items.iter().map(array_depth).max().unwrap_or(1),
        _ => 1,
    }
}

/// Plans a GGUF v3 file as llama.cpp's writers lay it out.
pub fn layout(metadata: &Metadata, tensors: &[TensorHeader]) -> Result<Layout, GgufError> {
    layout_in(metadata, tensors, ByteOrder::Little)
}

/// [`layout`] with every number of the header in byte order `o`; the magic stays `GGUF`
/// (gguf-py packs it little-endian whatever the order).
pub fn layout_in(
    metadata: &Metadata,
    tensors: &[TensorHeader],
    o: ByteOrder,
) -> Result<Layout, GgufError> {
    let alignment = match metadata.get(keys::general::ALIGNMENT) {
        None => DEFAULT_ALIGNMENT,
        Some(Value::U32(a)) if a.is_power_of_two() => *a,
        Some(v) => {
            return Err(GgufError::Invalid(format!(
                "general.alignment must be a UINT32 power of two, got {v:?}"
            )))
        }
    } as u64;
    let mut h = Vec::with_capacity(4096);
    h.extend_from_slice(b"GGUF");
    o.put(&mut h, 3u32.to_le_bytes());
    o.put(&mut h, (tensors.len() as u64).to_le_bytes());
    o.put(&mut h, (metadata.len() as u64).to_le_bytes());
    for (k, v) in metadata.iter() {
        if k.is_empty() {
            return Err(GgufError::Invalid("empty metadata key".into()));
        }
        if let Value::Array(a) = v {
            if array_depth(a) > super::MAX_ARRAY_DEPTH {
                return Err(GgufError::Invalid(format!(
                    "key '{k}': arrays nested more than {} levels deep",
                    super::MAX_ARRAY_DEPTH
                )));
            }
        }
        push_str(&mut h, k.as_bytes(), o);
        o.put(&mut h, (v.value_type() as u32).to_le_bytes());
        v.encode_in(&mut h, o);
    }
    let mut offsets = Vec::with_capacity(tensors.len());
    let mut sizes = Vec::with_capacity(tensors.len());
    let mut next = 0u64;
    let mut seen = std::collections::HashSet::new();
    for t in tensors {
        if t.name.is_empty() || t.name.len() > MAX_TENSOR_NAME || t.name.contains('\0') {
            return Err(GgufError::Invalid(format!(
                "tensor name {:?} is empty, longer than {MAX_TENSOR_NAME} bytes or contains NUL",
                t.name
            )));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(GgufError::Invalid(format!("duplicate tensor '{}'", t.name)));
        }
        if t.dims.len() > MAX_DIMS {
            return Err(GgufError::Invalid(format!(
                "tensor '{}' has {} dimensions (at most {MAX_DIMS})",
                t.name,
                t.dims.len()
            )));
        }
        let nbytes = tensor_nbytes(t.ty, &t.dims)
            .map_err(|p| GgufError::Invalid(format!("tensor '{}': {p}", t.name)))?;
        push_str(&mut h, t.name.as_bytes(), o);
        o.put(&mut h, (t.dims.len() as u32).to_le_bytes());
        for d in &t.dims {
            o.put(&mut h, d.to_le_bytes());
        }
        o.put(&mut h, t.ty.id().to_le_bytes());
        o.put(&mut h, next.to_le_bytes());
        offsets.push(next);
        sizes.push(nbytes);
        let overflow = || GgufError::Invalid(format!("tensor '{}': file size overflows", t.name));
        next = align_up(nbytes, alignment)
            .and_then(|p| next.checked_add(p))
            .ok_or_else(overflow)?;
    }
    let header_len = h.len();
    let data_offset = align_up(h.len() as u64, alignment).expect("header fits in memory");
    h.resize(data_offset as usize, 0);
    Ok(Layout {
        header: h,
        header_len,
        alignment,
        offsets,
        sizes,
        file_size: data_offset + next,
    })
}

/// Width of the elements gguf-py byte-swaps in a tensor of type `ty` when it writes a
/// big-endian file: the plain numeric types. BF16 and every block type reach its writer as
/// byte arrays (its quantizers return `uint8` views), which a byte swap leaves as they are,
/// so their bytes stay little-endian inside a big-endian file.
pub fn swapped_width(ty: GgmlType) -> usize {
    match ty {
        GgmlType::F16 | GgmlType::I16 => 2,
        GgmlType::F32 | GgmlType::I32 => 4,
        GgmlType::F64 | GgmlType::I64 => 8,
        _ => 1,
    }
}

/// `data` (a tensor of type `ty` in byte order `from`) as it goes into a file of byte order
/// `to`: the elements of [`swapped_width`] swapped when the orders differ.
pub fn reorder(ty: GgmlType, from: ByteOrder, to: ByteOrder, data: &[u8]) -> Cow<'_, [u8]> {
    let w = swapped_width(ty);
    if from == to || w == 1 {
        return Cow::Borrowed(data);
    }
    let mut v = data.to_vec();
    v.chunks_exact_mut(w).for_each(<[u8]>::reverse);
    Cow::Owned(v)
}

/// Writes a planned file: the header, then each tensor's bytes from `tensor_data(i)` in
/// order, each followed by zero padding. `tensor_data` must return exactly the planned size.
pub fn write_gguf<'a, W: Write>(
    out: &mut W,
    layout: &Layout,
    mut tensor_data: impl FnMut(usize) -> Result<Cow<'a, [u8]>, GgufError>,
) -> Result<(), GgufError> {
    let io = |source| GgufError::Io { path: None, source };
    out.write_all(&layout.header).map_err(io)?;
    let mut data_writer = DataWriter::default();
    for i in 0..layout.sizes.len() {
        let data = tensor_data(i)?;
        data_writer.put(out, layout, i, &data, true)?;
    }
    Ok(())
}

/// Writes the tensor data of a laid-out file in order, each tensor whole or in consecutive
/// pieces: checks that every tensor gets exactly the bytes its layout plans and follows its
/// last piece with the zero padding up to the alignment. Every writer of tensor data goes
/// through it, so the size check and the padding exist once.
#[derive(Debug, Default)]
pub struct DataWriter {
    /// Bytes of the current tensor written so far.
    in_tensor: u64,
    /// Zeros for the padding (the alignment's worth, made on first use).
    zeros: Vec<u8>,
}

impl DataWriter {
    /// Writes `data`, the next bytes of tensor `i` of `layout`; `last` marks the tensor's
    /// final piece, after which its padding is written. Returns the bytes written, padding
    /// included. A tensor given more bytes than planned, or fewer by its last piece, is an
    /// [`GgufError::Invalid`] naming the tensor's index and both sizes.
    pub fn put<W: Write>(
        &mut self,
        out: &mut W,
        layout: &Layout,
        i: usize,
        data: &[u8],
        last: bool,
    ) -> Result<u64, GgufError> {
        let pad = self.account(layout, i, data.len() as u64, last)?;
        let io = |source| GgufError::Io { path: None, source };
        out.write_all(data).map_err(io)?;
        if pad > 0 {
            if self.zeros.len() < pad as usize {
                self.zeros.resize(layout.alignment as usize, 0);
            }
            out.write_all(&self.zeros[..pad as usize]).map_err(io)?;
        }
        Ok(data.len() as u64 + pad)
    }

    /// Counts `len` bytes of tensor `i` that were written elsewhere (at their offset, by
    /// another handle on the file), with [`DataWriter::put`]'s size checks; returns the
    /// padding that follows them (nonzero only after a last piece).
    pub fn account(
        &mut self,
        layout: &Layout,
        i: usize,
        len: u64,
        last: bool,
    ) -> Result<u64, GgufError> {
        let planned = *layout
            .sizes
            .get(i)
            .ok_or_else(|| GgufError::Invalid(format!("tensor {i} is not in the layout")))?;
        let got = self.in_tensor + len;
        if got > planned || (last && got != planned) {
            return Err(GgufError::Invalid(format!(
                "tensor {i} produced {got} bytes, {planned} were planned"
            )));
        }
        if !last {
            self.in_tensor = got;
            return Ok(0);
        }
        self.in_tensor = 0;
        Ok((layout.alignment - got % layout.alignment) % layout.alignment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::{ArrayValue, GgufFile};
    use crate::mapped::FileBytes;

    fn nested(depth: usize) -> ArrayValue {
        (1..depth).fold(ArrayValue::U8(vec![1]), |a, _| ArrayValue::Array(vec![a]))
    }

    /// Pieces that add up to a tensor's planned size write the same bytes as the whole
    /// tensor, padding after the last piece only; too many bytes, or too few by the last
    /// piece, are refused with both sizes.
    #[test]
    fn data_writer_checks_sizes_and_pads_after_the_last_piece() {
        let mut md = Metadata::new();
        md.set("general.architecture", "x");
        let headers = [
            TensorHeader {
                name: "a".into(),
                dims: vec![3],
                ty: GgmlType::F32,
            },
            TensorHeader {
                name: "b".into(),
                dims: vec![2],
                ty: GgmlType::F32,
            },
        ];
        let plan = layout(&md, &headers).unwrap();
        let a: Vec<u8> = (1..=12).collect();
        let b: Vec<u8> = (13..=20).collect();
        let mut whole = Vec::new();
        let mut w = DataWriter::default();
        assert_eq!(w.put(&mut whole, &plan, 0, &a, true).unwrap(), 32);
        assert_eq!(w.put(&mut whole, &plan, 1, &b, true).unwrap(), 32);
        let mut pieces = Vec::new();
        let mut w = DataWriter::default();
        assert_eq!(w.put(&mut pieces, &plan, 0, &a[..5], false).unwrap(), 5);
        assert_eq!(w.put(&mut pieces, &plan, 0, &a[5..], true).unwrap(), 27);
        w.put(&mut pieces, &plan, 1, &b, true).unwrap();
        assert_eq!(pieces, whole);
        assert_eq!(&whole[..12], &a[..]);
        assert!(whole[12..32].iter().all(|&z| z == 0));

        let too_many = DataWriter::default().put(&mut Vec::new(), &plan, 0, &[0; 13], false);
        assert!(
            matches!(&too_many, Err(GgufError::Invalid(m)) if m == "tensor 0 produced 13 bytes, 12 were planned"),
            "{too_many:?}"
        );
        let mut w = DataWriter::default();
        w.put(&mut Vec::new(), &plan, 1, &b[..4], false).unwrap();
        let too_few = w.put(&mut Vec::new(), &plan, 1, &b[4..6], true);
        assert!(
            matches!(&too_few, Err(GgufError::Invalid(m)) if m == "tensor 1 produced 6 bytes, 8 were planned"),
            "{too_few:?}"
        );
        let absent = DataWriter::default().put(&mut Vec::new(), &plan, 2, &b, true);
        assert!(matches!(absent, Err(GgufError::Invalid(_))));
    }

    #[test]
    fn writer_and_reader_agree_on_array_nesting() {
        for depth in 1..=6 {
            let mut md = Metadata::new();
            md.set("general.architecture", "x");
            md.set("nested", Value::Array(nested(depth)));
            let planned = layout(&md, &[]);
            assert_eq!(
                planned.is_ok(),
                depth <= crate::gguf::MAX_ARRAY_DEPTH,
                "depth {depth}"
            );
            if let Ok(l) = planned {
                let f = GgufFile::parse(FileBytes::from_vec(l.header.clone())).unwrap();
                assert_eq!(f.metadata.get("nested"), Some(&Value::Array(nested(depth))));
            }
        }
    }

    #[test]
    fn layout_rejects_bad_tensors() {
        let md = Metadata::new();
        let t = |name: &str, dims: Vec<u64>, ty| TensorHeader {
            name: name.into(),
            dims,
            ty,
        };
        assert!(layout(&md, &[t("a", vec![33], GgmlType::Q4_0)]).is_err());
        assert!(layout(&md, &[t(&"x".repeat(64), vec![32], GgmlType::F32)]).is_err());
        assert!(layout(
            &md,
            &[
                t("a", vec![1], GgmlType::F32),
                t("a", vec![1], GgmlType::F32)
            ]
        )
        .is_err());
        assert!(layout(&md, &[t("a", vec![1, 1, 1, 1, 1], GgmlType::F32)]).is_err());
        let ok = layout(
            &md,
            &[
                t("a", vec![3], GgmlType::F32),
                t("b", vec![32], GgmlType::Q8_0),
            ],
        )
        .unwrap();
        assert_eq!(ok.offsets, vec![0, 32]);
        assert_eq!(ok.file_size, ok.data_offset() + 32 + 64);
    }
}
