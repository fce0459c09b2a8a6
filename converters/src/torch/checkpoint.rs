//! A `torch.save` checkpoint → its tensors as checked byte ranges of the mapped file.
//!
//! The archive's members are `<archive>/data.pkl` (the state dict), `<archive>/data/<key>`
//! (one storage each) and a few small records (`byteorder`, `version`); `<archive>` is the
//! part of the first member's name before its `/` (torch names it after the file it first
//! saved to). A tensor is a view of a storage: element offset, shape and strides. We read
//! views that are contiguous (row-major strides; size-1 dimensions may have any stride), the
//! only kind a saved state dict normally holds, and refuse others by name.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use ggufkit::mapped::FileBytes;

use super::zip::{self, Member};
use super::{pickle, TorchError, TorchErrorKind};
use crate::hf::safetensors::StTensor;
use crate::ConvertError;

/// The first bytes of a legacy checkpoint: pickle protocol 2, then `LONG1` of the magic
/// number 0x1950a86a20f9469cfc6c.
const LEGACY_MAGIC: &[u8] = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";

/// Whether `bytes` look like a checkpoint of torch before 1.6: a bare pickle (the magic
/// number first, or any pickle protocol opcode) or a tar archive (`ustar` at 257).
fn is_legacy(bytes: &[u8]) -> bool {
    bytes.starts_with(LEGACY_MAGIC)
        || bytes.first() == Some(&0x80)
        || bytes.get(257..262) == Some(&b"ustar"[..])
}

/// Reads the checkpoint `file` (mapped from `path`): its state dict's tensors in the dict's
/// order, each a checked range of the file. The phases: the archive's members, its byte
/// order, the pickled state dict, then each tensor placed in its storage's member.
pub fn read_checkpoint(path: &Path, file: &Arc<FileBytes>) -> Result<Vec<StTensor>, ConvertError> {
    let bytes: &[u8] = file.local().map_err(|e| ConvertError::io(path, e.into()))?;
    let members = archive_members(path, bytes)?;
    let archive = Archive::new(path, bytes, &members)?;
    archive.check_byte_order()?;
    let specs = archive.state_dict()?;
    let mut out = Vec::with_capacity(specs.len());
    let mut members_of: HashMap<*const u8, &Member> = HashMap::new();
    for s in specs {
        // Looked up once per storage: the key is shared, and may be long.
        let member = match members_of.get(&s.storage.as_ptr()) {
            Some(&m) => m,
            None => {
                let m = archive.storage(&s)?;
                members_of.insert(s.storage.as_ptr(), m);
                m
            }
        };
        out.push(place_tensor(path, file, s, member)?);
    }
    Ok(out)
}

/// The members of the zip archive `bytes`; a file that is not one is refused as a legacy
/// checkpoint (torch before 1.6) or as no checkpoint at all.
fn archive_members(path: &Path, bytes: &[u8]) -> Result<Vec<Member>, ConvertError> {
    let err = |kind: TorchErrorKind| TorchError::convert_error(path, kind);
    if !zip::looks_like_zip(bytes) {
        return Err(err(if is_legacy(bytes) {
            TorchErrorKind::Legacy
        } else {
            TorchErrorKind::NotACheckpoint
        }));
    }
    zip::read_members(bytes).map_err(|e| err(e.into()))
}

/// A torch archive's members by name, under its `<archive>/` prefix.
struct Archive<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    prefix: String,
    by_name: HashMap<&'a str, &'a Member>,
}

impl<'a> Archive<'a> {
    /// The archive whose first member names its prefix.
    fn new(path: &'a Path, bytes: &'a [u8], members: &'a [Member]) -> Result<Self, ConvertError> {
        let archive = |problem: String| archive_error(path, problem);
        let first = members
            .first()
            .ok_or_else(|| archive("the zip archive is empty".into()))?;
        let prefix = first
            .name
            .split_once('/')
            .map(|(p, _)| p.to_string())
            .ok_or_else(|| {
                archive(format!(
                    "the first member '{}' is not in a directory (torch archives hold \
                     <archive>/data.pkl)",
                    first.name
                ))
            })?;
        let by_name = members.iter().map(|m| (m.name.as_str(), m)).collect();
        Ok(Archive {
            path,
            bytes,
            prefix,
            by_name,
        })
    }

    /// The member `name`, if any; a compressed one is refused.
    fn stored(&self, name: &str) -> Result<Option<&'a Member>, ConvertError> {
        match self.by_name.get(name) {
            None => Ok(None),
            Some(m) if m.method != 0 => Err(archive_error(
                self.path,
                format!(
                    "member '{name}' is compressed (method {}); torch stores checkpoint \
                     members uncompressed",
                    m.method
                ),
            )),
            Some(m) => Ok(Some(*m)),
        }
    }

    /// `<archive>/byteorder`, when there is one, says little-endian.
    fn check_byte_order(&self) -> Result<(), ConvertError> {
        if let Some(m) = self.stored(&format!("{}/byteorder", self.prefix))? {
            let order = m.data(self.bytes);
            if order != b"little" {
                return Err(archive_error(
                    self.path,
                    format!(
                        "byte order {:?}: only little-endian checkpoints are supported",
                        String::from_utf8_lossy(order)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The tensors `<archive>/data.pkl` declares, once its CRC-32 is checked.
    fn state_dict(&self) -> Result<Vec<pickle::TensorSpec>, ConvertError> {
        let pkl_name = format!("{}/data.pkl", self.prefix);
        let pkl = self.stored(&pkl_name)?.ok_or_else(|| {
            archive_error(
                self.path,
                format!("no '{pkl_name}' member: not a torch.save archive"),
            )
        })?;
        let pkl_bytes = pkl.data(self.bytes);
        if zip::crc32(pkl_bytes) != pkl.crc32 {
            return Err(archive_error(
                self.path,
                format!("member '{pkl_name}' fails its CRC-32 check (corrupt file)"),
            ));
        }
        pickle::load_state_dict(pkl_bytes)
            .map_err(|e| TorchError::convert_error(self.path, TorchErrorKind::from(e)))
    }

    /// The member holding the storage of `s`.
    fn storage(&self, s: &pickle::TensorSpec) -> Result<&'a Member, ConvertError> {
        let member_name = format!("{}/data/{}", self.prefix, s.storage);
        self.stored(&member_name)?.ok_or_else(|| {
            tensor_error(
                self.path,
                &s.name,
                format!(
                    "its storage '{}' has no member '{member_name}' in the archive",
                    s.storage
                ),
            )
        })
    }
}

/// An archive-level error in `path`.
fn archive_error(path: &Path, problem: String) -> ConvertError {
    TorchError::convert_error(path, TorchErrorKind::Archive(problem))
}

/// An error about the tensor `name` of `path`.
fn tensor_error(path: &Path, name: &str, problem: String) -> ConvertError {
    TorchError::convert_error(
        path,
        TorchErrorKind::Tensor {
            name: name.to_string(),
            problem,
        },
    )
}

/// The tensor `s` as a byte range of `file`: its storage's member has the size the pickle
/// declares, its view is contiguous, and its elements lie inside the storage.
fn place_tensor(
    path: &Path,
    file: &Arc<FileBytes>,
    s: pickle::TensorSpec,
    member: &Member,
) -> Result<StTensor, ConvertError> {
    let terr = |problem: String| tensor_error(path, &s.name, problem);
    if member.size != s.storage_bytes {
        return Err(terr(format!(
            "storage '{}' is {} bytes in the archive but the pickle declares {}",
            s.storage, member.size, s.storage_bytes
        )));
    }
    let elem = s.dtype.size();
    let numel = s
        .shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| terr(format!("shape {:?} overflows", s.shape)))?;
    check_contiguous(&s.shape, &s.stride, numel).map_err(&terr)?;
    let len = numel
        .checked_mul(elem)
        .ok_or_else(|| terr(format!("shape {:?} overflows", s.shape)))?;
    let start = s
        .offset
        .checked_mul(elem)
        .filter(|&o| o.checked_add(len).is_some_and(|end| end <= member.size))
        .ok_or_else(|| {
            terr(format!(
                "elements [{}, +{numel}) of {} run past its storage '{}' of {} bytes",
                s.offset,
                s.dtype.name(),
                s.storage,
                member.size
            ))
        })?;
    // In the file by construction: data_offset + size <= file length (zip.rs).
    let offset = usize::try_from(member.data_offset + start)
        .map_err(|_| terr("offset does not fit in memory".into()))?;
    Ok(StTensor {
        name: s.name,
        dtype: s.dtype,
        shape: s.shape,
        file: file.clone(),
        offset,
        len: len as usize,
    })
}

/// Row-major strides for `shape`, except where a dimension of size 1 makes the stride
/// irrelevant; an empty tensor is contiguous whatever its strides.
fn check_contiguous(shape: &[u64], stride: &[u64], numel: u64) -> Result<(), String> {
    if numel == 0 {
        return Ok(());
    }
    let mut expect = 1u64;
    for (i, (&d, &s)) in shape.iter().zip(stride).enumerate().rev() {
        if d != 1 && s != expect {
            return Err(format!(
                "not contiguous (shape {shape:?}, strides {stride:?}: dimension {i} has stride \
                 {s}, {expect} expected); only contiguous tensors are read"
            ));
        }
        expect = expect.saturating_mul(d);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity() {
        assert!(check_contiguous(&[2, 3], &[3, 1], 6).is_ok());
        assert!(check_contiguous(&[3, 2], &[1, 3], 6).is_err());
        assert!(check_contiguous(&[1, 4], &[99, 1], 4).is_ok());
        assert!(check_contiguous(&[0, 4], &[0, 0], 0).is_ok());
        assert!(check_contiguous(&[], &[], 1).is_ok());
    }

    #[test]
    fn legacy_and_garbage_are_told_apart() {
        let path = Path::new("pytorch_model.bin");
        let kind = |b: &[u8]| match read_checkpoint(path, &FileBytes::from_vec(b.to_vec())) {
            Err(ConvertError::Torch(e)) => e.kind,
            other => panic!("{other:?}"),
        };
        assert!(matches!(kind(LEGACY_MAGIC), TorchErrorKind::Legacy));
        assert!(matches!(kind(b"hello"), TorchErrorKind::NotACheckpoint));
        assert!(matches!(kind(b"PK\x03\x04"), TorchErrorKind::Zip(_)));
    }
}
