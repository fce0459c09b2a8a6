//! Importance matrices: the GGUF imatrix (`llama-imatrix -o x.gguf`) and the legacy `.dat`,
//! loaded as llama-quantize loads them (per-column mean squared activations).

use std::collections::BTreeMap;
use std::path::Path;

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
    pub problem: String,
}

impl Imatrix {
    /// Loads `path`: a GGUF imatrix, or else a legacy `.dat`.
    pub fn load(path: &Path) -> Result<Imatrix, ImatrixError> {
        let err = |problem: String| ImatrixError {
            path: path.display().to_string(),
            problem,
        };
        let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
        Self::parse(bytes).map_err(err)
    }

    /// Parses imatrix bytes: a GGUF imatrix, or else a legacy `.dat`.
    pub fn parse(bytes: Vec<u8>) -> Result<Imatrix, String> {
        let im = if bytes.starts_with(b"GGUF") {
            let f = GgufFile::parse(crate::mapped::FileBytes::from_vec(bytes))
                .map_err(|e| e.to_string())?;
            Self::from_gguf(&f)?
        } else {
            Self::from_dat(&bytes)?
        };
        for (name, v) in &im.entries {
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return Err(format!("entry '{name}' contains the non-finite value {x}"));
            }
        }
        Ok(im)
    }

    fn from_gguf(f: &GgufFile) -> Result<Imatrix, String> {
        if f.tensors.is_empty() {
            return Err("no data (no tensors)".into());
        }
        let md = &f.metadata;
        if !(md.contains("imatrix.datasets")
            && md.contains("imatrix.chunk_count")
            && md.contains("imatrix.chunk_size"))
        {
            return Err("missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)".into());
        }
        let datasets = match md.get_array("imatrix.datasets", ValueType::String) {
            Ok(ArrayValue::String(v)) => v.iter().map(|s| s.to_lossy().into_owned()).collect(),
            Ok(_) => Vec::new(),
            Err(e) => return Err(e.to_string()),
        };
        let chunk_count = md
            .get_u32("imatrix.chunk_count")
            .map_err(|e| e.to_string())?;
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
                return Err(format!("mismatched sums and counts for {name}"));
            };
            if sums.ty != GgmlType::F32 || counts.ty != GgmlType::F32 {
                return Err(format!("sums and counts for {name} must be F32"));
            }
            let sums = floats(sums);
            let counts: Vec<f32> = floats(counts)
                .iter()
                .map(|c| c.round() as i64 as f32)
                .collect();
            if counts.is_empty() || sums.len() % counts.len() != 0 {
                return Err(format!(
                    "{name}: {} sums do not split into {} matrices",
                    sums.len(),
                    counts.len()
                ));
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

    fn from_dat(b: &[u8]) -> Result<Imatrix, String> {
        let mut c = DatCursor { b, pos: 0 };
        let n_entries = c.i32("the entry count")?;
        if n_entries < 1 {
            return Err("not a GGUF imatrix, and as a legacy .dat it has no entries".into());
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
                return Err(format!("entry '{name}' has {nval} values"));
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
        if c.pos < b.len() {
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

struct DatCursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> DatCursor<'a> {
    fn bytes(&mut self, n: i64, what: &str) -> Result<&'a [u8], String> {
        let remaining = (self.b.len() - self.pos) as i64;
        if n < 0 || n > remaining {
            return Err(format!(
                "at byte {}: {what} needs {n} bytes, {remaining} remain",
                self.pos
            ));
        }
        let s = &self.b[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    fn i32(&mut self, what: &str) -> Result<i32, String> {
        let s = self.bytes(4, what)?;
        Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
}
