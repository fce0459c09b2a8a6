//! `gguf-inspect verify`: structural checks beyond parsing, and a NaN/Inf scan.

use crate::gguf::keys;
use rayon::prelude::*;
use serde_json::{json, Value as Json};

use crate::gguf::{align_up, GgufFile};
use crate::quantizers::{dequantize_rows, traits, GgmlType};

/// What `verify` found.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// Problems that make the file invalid or unloadable by llama.cpp.
    pub errors: Vec<String>,
    /// Things worth knowing that do not make the file invalid.
    pub warnings: Vec<String>,
    /// Tensors with non-finite values: (name, NaN count, Inf count).
    pub non_finite: Vec<(String, u64, u64)>,
    /// Tensors that were scanned.
    pub scanned: usize,
    /// Tensors whose type we cannot decode (not scanned).
    pub not_scanned: Vec<String>,
}

impl VerifyReport {
    /// True when nothing is wrong.
    pub fn ok(&self) -> bool {
        self.errors.is_empty() && self.non_finite.is_empty()
    }

    /// Machine-readable report.
    pub fn to_json(&self) -> Json {
        json!({
            "ok": self.ok(),
            "errors": self.errors,
            "warnings": self.warnings,
            "non_finite": self.non_finite.iter().map(|(n, a, b)| json!({"tensor": n, "nan": a, "inf": b})).collect::<Vec<_>>(),
            "scanned_tensors": self.scanned,
            "not_scanned": self.not_scanned,
        })
    }
}

fn count_non_finite(ty: GgmlType, data: &[u8]) -> Option<(u64, u64)> {
    let count = |vals: &mut dyn Iterator<Item = f32>| {
        vals.fold((0u64, 0u64), |(n, i), v| {
            (n + v.is_nan() as u64, i + v.is_infinite() as u64)
        })
    };
    match ty {
        GgmlType::F32 => Some(count(
            &mut data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        )),
        GgmlType::F64 => {
            Some(count(&mut data.chunks_exact(8).map(|c| {
                f64::from_le_bytes(c.try_into().expect("8-byte chunk")) as f32
            })))
        }
        GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64 => Some((0, 0)),
        _ => {
            let tr = traits(ty);
            tr.dequantize?;
            // Decode in bounded chunks so that a huge tensor never needs a huge buffer.
            let blocks_per_chunk = (1 << 16) / tr.block_size.max(1) + 1;
            let chunk_bytes = blocks_per_chunk * tr.type_size;
            Some(
                data.par_chunks(chunk_bytes)
                    .map(|c| {
                        let mut buf = vec![0f32; c.len() / tr.type_size * tr.block_size];
                        if dequantize_rows(ty, c, &mut buf).is_err() {
                            return (0, 0);
                        }
                        count(&mut buf.into_iter())
                    })
                    .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
            )
        }
    }
}

/// [`count_non_finite`] for a big-endian file: float elements are byte-swapped in bounded
/// chunks first; block-quantized data is not scanned (its fields' byte order is per type).
fn count_non_finite_big_endian(ty: GgmlType, data: &[u8]) -> Option<(u64, u64)> {
    let w = match ty {
        GgmlType::F32 => 4,
        GgmlType::F64 => 8,
        GgmlType::F16 | GgmlType::BF16 => 2,
        GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64 => return Some((0, 0)),
        _ => return None,
    };
    let mut total = (0u64, 0u64);
    let mut buf = Vec::with_capacity((1 << 16) * w);
    for chunk in data.chunks((1 << 16) * w) {
        buf.clear();
        for e in chunk.chunks_exact(w) {
            buf.extend(e.iter().rev());
        }
        let (n, i) = count_non_finite(ty, &buf)?;
        total = (total.0 + n, total.1 + i);
    }
    Some(total)
}

/// For a shard of a split model (`split.count` > 1): the other shards llama.cpp opens next to
/// it (`<prefix>-NNNNN-of-MMMMM.gguf`) must exist; a single file claiming to be split is an
/// error.
pub fn verify_split_siblings(path: &std::path::Path, file: &GgufFile, r: &mut VerifyReport) {
    let md = &file.metadata;
    let Some(count) = md.get(keys::split::COUNT).and_then(|v| v.as_int()) else {
        return;
    };
    if count <= 1 {
        return;
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let suffix = format!("-of-{count:05}.gguf");
    let prefix = name
        .strip_suffix(&suffix)
        .and_then(|s| s.len().checked_sub(6).map(|n| (&s[..n], &s[n..])))
        .filter(|(_, no)| no.starts_with('-') && no[1..].bytes().all(|b| b.is_ascii_digit()))
        .map(|(p, _)| p);
    let Some(prefix) = prefix else {
        r.errors.push(format!(
            "split.count = {count}, but the file name is not <prefix>-NNNNN{suffix}: \
             llama.cpp cannot find the other shards"
        ));
        return;
    };
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    for i in 1..=count.min(99_999) {
        let p = dir.join(format!("{prefix}-{i:05}{suffix}"));
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => {}
            Ok(_) => r
                .errors
                .push(format!("shard {} is not a regular file", p.display())),
            Err(_) => r.errors.push(format!(
                "split.count = {count}: shard {} does not exist",
                p.display()
            )),
        }
    }
}

/// Verifies a parsed file (the parser already enforced the format rules).
pub fn verify_file(file: &GgufFile) -> VerifyReport {
    let mut r = VerifyReport::default();
    if file.version != 3 {
        r.warnings.push(format!(
            "GGUF version {} (llama.cpp reads only version 3 as of 2026; 2 is read by gguf-py)",
            file.version
        ));
    }
    if file.byte_order != crate::gguf::ByteOrder::Little {
        r.warnings
            .push("big-endian file: llama.cpp refuses it on little-endian hosts".into());
    }
    let md = &file.metadata;
    r.errors.extend(super::loadable::arch_problems(md));
    r.errors.extend(super::loadable::vocab_problems(md));
    r.errors.extend(super::loadable::missing_layer_tensors(
        md,
        file.tensors.iter().map(|t| t.name.as_str()),
    ));
    r.errors.extend(super::shapes::shape_problems(
        md,
        file.tensors
            .iter()
            .map(|t| (t.name.as_str(), t.dims.as_slice())),
    ));
    if let Some(n) = md.get(keys::split::COUNT).and_then(|v| v.as_int()) {
        if n > 1 && !md.contains(keys::split::NO) {
            r.errors.push(format!(
                "split.count = {n} but no split.no: not a shard llama.cpp can load"
            ));
        }
    }
    let quantized = file.tensors.iter().any(|t| t.ty.is_quantized());
    if quantized && !file.metadata.contains(keys::general::QUANTIZATION_VERSION) {
        r.warnings
            .push("quantized tensors but no general.quantization_version".into());
    }
    // Padding between and after tensors must be zero.
    let bytes = file.local_bytes();
    let a = file.alignment as u64;
    for t in &file.tensors {
        let start = file.data_offset + t.offset + t.nbytes;
        let end = align_up(start, a).unwrap_or(start).min(file.file_size());
        if bytes[start as usize..end as usize].iter().any(|&b| b != 0) {
            r.errors
                .push(format!("non-zero padding after tensor '{}'", t.name));
        }
    }
    let big_endian = file.byte_order == crate::gguf::ByteOrder::Big;
    let results: Vec<(String, Option<(u64, u64)>)> = file
        .tensors
        .par_iter()
        .map(|t| {
            let data = file.tensor_data(t);
            let res = if big_endian {
                count_non_finite_big_endian(t.ty, data)
            } else {
                count_non_finite(t.ty, data)
            };
            (t.name.clone(), res)
        })
        .collect();
    for (name, res) in results {
        match res {
            Some((0, 0)) => r.scanned += 1,
            Some((nan, inf)) => {
                r.scanned += 1;
                r.non_finite.push((name, nan, inf));
            }
            None => r.not_scanned.push(name),
        }
    }
    if !r.not_scanned.is_empty() {
        r.warnings.push(format!(
            "{} tensors not scanned for NaN/Inf (type not decodable here)",
            r.not_scanned.len()
        ));
    }
    r
}
