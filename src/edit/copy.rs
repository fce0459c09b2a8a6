//! A metadata edit written as a new header followed by the input's data section copied by
//! the kernel (`copy_file_range` through `std::io::copy`), when that gives exactly the bytes
//! the output engine would write: the same tensors at the same offsets, the same data
//! section length, and zero padding in the input (what gguf-py writes). Otherwise the
//! engine copies tensor by tensor.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::gguf::{layout_in, GgufFile, Layout, Metadata, TensorHeader};
use crate::output::{AtomicOutput, OutputError, OutputRules};

/// The layout of `file` with `metadata`, when its data section can be copied as it is.
pub fn plan(file: &GgufFile, metadata: &Metadata) -> Option<Layout> {
    let headers: Vec<TensorHeader> = file
        .tensors
        .iter()
        .map(|t| TensorHeader {
            name: t.name.clone(),
            dims: t.dims.clone(),
            ty: t.ty,
        })
        .collect();
    let layout = layout_in(metadata, &headers, file.byte_order).ok()?;
    let bytes: &[u8] = file.local_bytes();
    let data = bytes.get(file.data_offset as usize..)?;
    if layout.alignment != file.alignment as u64
        || layout.file_size - layout.data_offset() != data.len() as u64
    {
        return None;
    }
    // Every tensor where the engine would put it, and nothing but zeros between them.
    let mut end = 0u64;
    for (t, &off) in file.tensors.iter().zip(&layout.offsets) {
        if t.offset != off || t.offset < end {
            return None;
        }
        let gap = data.get(end as usize..t.offset as usize)?;
        if gap.iter().any(|&b| b != 0) {
            return None;
        }
        end = t.offset.checked_add(t.nbytes)?;
    }
    let tail = data.get(end as usize..)?;
    tail.iter().all(|&b| b == 0).then_some(layout)
}

/// Writes `layout`'s header and then the data section of `input` (whose parsed form is
/// `file`) to `target`, through a temporary file renamed into place. Returns the size.
pub fn write(
    file: &GgufFile,
    layout: &Layout,
    input: &Path,
    target: &Path,
    rules: &OutputRules,
) -> Result<u64, OutputError> {
    let io = |source| OutputError::Io {
        path: target.to_path_buf(),
        source,
    };
    let input_io = |source| OutputError::Io {
        path: input.to_path_buf(),
        source,
    };
    let mut src = File::open(input).map_err(input_io)?;
    src.seek(SeekFrom::Start(file.data_offset))
        .map_err(input_io)?;
    let len = layout.file_size - layout.data_offset();
    let mut out = AtomicOutput::create(target, rules)?;
    out.write_all(&layout.header).map_err(io)?;
    out.flush().map_err(io)?;
    let copied = std::io::copy(&mut (&mut src).take(len), out.writer().get_mut()).map_err(io)?;
    if copied != len {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "{} ended after {copied} of {len} data bytes",
                input.display()
            ),
        )));
    }
    out.commit()?;
    Ok(layout.file_size)
}
