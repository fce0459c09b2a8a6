//! Importance matrices: the GGUF imatrix (`llama-imatrix -o x.gguf`) and the legacy `.dat`,
//! loaded as llama-quantize loads them (per-column mean squared activations).

use crate::gguf::keys;
use std::collections::BTreeMap;
use std::path::Path;

use crate::cursor::Cursor;
use crate::gguf::{ArrayValue, GgufFile, ValueType};
use crate::quantizers::GgmlType;

/// A loaded importance matrix.
#[derive(Debug, Clone, Default)]
pub struct Imatrix {
    /// Weight name → per-column importance (`ne0 × n_matrices` values).
    pub entries: BTreeMap<String, Vec<f32>>,
    /// Datasets it was computed on.
    pub datasets: Vec<String>,
    /// Chunks it was computed on (0 when unknown).
    pub chunk_count: u32,
}

/// Why an imatrix could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("imatrix {path}: {problem}")]
pub struct ImatrixError {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub problem: ImatrixProblem,
}

/// What is wrong with an imatrix's bytes.
#[derive(Debug, thiserror::Error)]
pub enum ImatrixProblem {
    /// The file could not be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A GGUF imatrix that is not a valid GGUF file.
    #[error("{0}")]
    Gguf(Box<crate::gguf::GgufError>),
    /// A GGUF imatrix metadata value of the wrong type.
    #[error("{0}")]
    Metadata(#[from] crate::gguf::MetadataError),
    /// A GGUF imatrix without tensors.
    #[error("no data (no tensors)")]
    NoTensors,
    /// A GGUF file without the imatrix KVs.
    #[error(
        "missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)"
    )]
    MissingMetadata,
    /// An `.in_sum2` tensor without its `.counts`, or the reverse.
    #[error("mismatched sums and counts for {0}")]
    Unpaired(String),
    /// Sums or counts stored in another type than F32.
    #[error("sums and counts for {0} must be F32")]
    NotF32(String),
    /// Sums that do not split into one row per count.
    #[error("{name}: {sums} sums do not split into {matrices} matrices")]
    Shape {
        /// The weight.
        name: String,
        /// Number of sums.
        sums: usize,
        /// Number of counts (matrices).
        matrices: usize,
    },
    /// A `.dat` whose entry count is not positive (and that is not GGUF either).
    #[error("not a GGUF imatrix, and as a legacy .dat it has no entries")]
    NoEntries,
    /// A `.dat` field that runs past the end of the file (or has a negative length).
    #[error("at byte {offset}: {what} needs {needed} bytes, {available} remain")]
    Truncated {
        /// Offset of the field.
        offset: u64,
        /// The field.
        what: String,
        /// Bytes it needs (negative lengths are shown as read).
        needed: i64,
        /// Bytes that remain.
        available: u64,
    },
    /// A `.dat` entry whose value count is not positive.
    #[error("entry '{name}' has {count} values")]
    ValueCount {
        /// The weight.
        name: String,
        /// The count read.
        count: i32,
    },
    /// A NaN or infinite importance.
    #[error("entry '{name}' contains the non-finite value {value}")]
    NonFinite {
        /// The weight.
        name: String,
        /// The value.
        value: f32,
    },
}

impl Imatrix {
    /// Loads `path`: a GGUF imatrix, or else a legacy `.dat`.
    pub fn load(path: &Path) -> Result<Imatrix, ImatrixError> {
        let err = |problem: ImatrixProblem| ImatrixError {
            path: path.display().to_string(),
            problem,
        };
        let bytes = crate::mapped::read_input(path).map_err(|e| err(e.into()))?;
        Self::parse(bytes).map_err(err)
    }

    /// Parses imatrix bytes: a GGUF imatrix, or else a legacy `.dat`.
    pub fn parse(bytes: Vec<u8>) -> Result<Imatrix, ImatrixProblem> {
        let im = if bytes.starts_with(b"GGUF") {
            let f = GgufFile::parse(crate::mapped::FileBytes::from_vec(bytes))
                .map_err(|e| ImatrixProblem::Gguf(Box::new(e)))?;
            Self::from_gguf(&f)?
        } else {
            Self::from_dat(&bytes)?
        };
        for (name, v) in &im.entries {
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return Err(ImatrixProblem::NonFinite {
                    name: name.clone(),
                    value: *x,
                });
            }
        }
        Ok(im)
    }

    fn from_gguf(f: &GgufFile) -> Result<Imatrix, ImatrixProblem> {
        if f.tensors.is_empty() {
            return Err(ImatrixProblem::NoTensors);
        }
        let md = &f.metadata;
        if !(md.contains(keys::imatrix::DATASETS)
            && md.contains(keys::imatrix::CHUNK_COUNT)
            && md.contains(keys::imatrix::CHUNK_SIZE))
        {
            return Err(ImatrixProblem::MissingMetadata);
        }
        let datasets = match md.get_array(keys::imatrix::DATASETS, ValueType::String) {
            Ok(ArrayValue::String(v)) => v.iter().map(|s| s.to_lossy().into_owned()).collect(),
            Ok(_) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let chunk_count = md.get_u32(keys::imatrix::CHUNK_COUNT)?;
        let mut pairs: BTreeMap<
            String,
            (
                Option<&crate::gguf::TensorInfo>,
                Option<&crate::gguf::TensorInfo>,
            ),
        > = BTreeMap::new();
        for t in &f.tensors {
            if let Some(n) = t.name.strip_suffix(".in_sum2") {
                pairs.entry(n.to_string()).or_default().0 = Some(t);
            } else if let Some(n) = t.name.strip_suffix(".counts") {
                pairs.entry(n.to_string()).or_default().1 = Some(t);
            }
        }
        let floats = |t: &crate::gguf::TensorInfo| -> Vec<f32> {
            f.tensor_data(t)
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let mut entries = BTreeMap::new();
        for (name, pair) in pairs {
            let (Some(sums), Some(counts)) = pair else {
                return Err(ImatrixProblem::Unpaired(name));
            };
            if sums.ty != GgmlType::F32 || counts.ty != GgmlType::F32 {
                return Err(ImatrixProblem::NotF32(name));
            }
            let sums = floats(sums);
            let counts: Vec<f32> = floats(counts)
                .iter()
                .map(|c| c.round() as i64 as f32)
                .collect();
            if counts.is_empty() || sums.len() % counts.len() != 0 {
                return Err(ImatrixProblem::Shape {
                    name,
                    sums: sums.len(),
                    matrices: counts.len(),
                });
            }
            let ne0 = sums.len() / counts.len();
            let mut values = vec![0f32; sums.len()];
            for (j, &count) in counts.iter().enumerate() {
                for i in 0..ne0 {
                    values[j * ne0 + i] = if count > 0.0 {
                        sums[j * ne0 + i] / count
                    } else {
                        1.0
                    };
                }
            }
            entries.insert(name, values);
        }
        Ok(Imatrix {
            entries,
            datasets,
            chunk_count,
        })
    }

    fn from_dat(b: &[u8]) -> Result<Imatrix, ImatrixProblem> {
        let mut c = DatCursor(Cursor::new(b));
        let n_entries = c.i32("the entry count")?;
        if n_entries < 1 {
            return Err(ImatrixProblem::NoEntries);
        }
        let mut entries = BTreeMap::new();
        for i in 0..n_entries {
            let len = c.i32(&format!("the name length of entry {i}"))?;
            let name =
                String::from_utf8_lossy(c.bytes(len as i64, &format!("the name of entry {i}"))?)
                    .into_owned();
            let ncall = c.i32(&format!("ncall of '{name}'"))?;
            let nval = c.i32(&format!("nval of '{name}'"))?;
            if nval < 1 {
                return Err(ImatrixProblem::ValueCount { name, count: nval });
            }
            let sums: Vec<f32> = c
                .bytes(nval as i64 * 4, &format!("the values of '{name}'"))?
                .chunks_exact(4)
                .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
                .collect();
            let values = if ncall > 0 {
                sums.iter().map(|s| s / ncall as f32).collect()
            } else {
                sums
            };
            entries.insert(name, values);
        }
        let mut chunk_count = 0;
        let mut datasets = Vec::new();
        if !c.0.at_end() {
            if let Ok(n) = c.i32("the chunk count") {
                chunk_count = n.max(0) as u32;
                if let Ok(len) = c.i32("the dataset name length") {
                    if len > 0 {
                        if let Ok(d) = c.bytes(len as i64, "the dataset name") {
                            datasets.push(String::from_utf8_lossy(d).into_owned());
                        }
                    }
                }
            }
        }
        Ok(Imatrix {
            entries,
            datasets,
            chunk_count,
        })
    }

    /// Applies `--exclude-weights` then `--include-weights` (substring matches).
    pub fn filter(&mut self, include: &[String], exclude: &[String]) {
        self.entries
            .retain(|name, _| !exclude.iter().any(|x| name.contains(x.as_str())));
        if !include.is_empty() {
            self.entries
                .retain(|name, _| include.iter().any(|x| name.contains(x.as_str())));
        }
    }
}

/// The checked cursor with the `.dat` reader's errors (lengths are signed i32 there).
struct DatCursor<'a>(Cursor<'a>);

impl<'a> DatCursor<'a> {
    fn bytes(&mut self, n: i64, what: &str) -> Result<&'a [u8], ImatrixProblem> {
        let truncated = |c: &Cursor| ImatrixProblem::Truncated {
            offset: c.offset(),
            what: what.to_string(),
            needed: n,
            available: c.remaining() as u64,
        };
        let Ok(len) = u64::try_from(n) else {
            return Err(truncated(&self.0));
        };
        self.0.take(len).map_err(|_| truncated(&self.0))
    }

    fn i32(&mut self, what: &str) -> Result<i32, ImatrixProblem> {
        let s = self.bytes(4, what)?;
        Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
}
