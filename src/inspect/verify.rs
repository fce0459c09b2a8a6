//! `gguf-inspect verify`: structural checks beyond parsing, and a NaN/Inf scan.

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
    match file.metadata.get_str("general.architecture") {
        Ok(_) => {}
        Err(e) => r
            .errors
            .push(format!("{e} (llama.cpp requires general.architecture)")),
    }
    let quantized = file.tensors.iter().any(|t| t.ty.is_quantized());
    if quantized && !file.metadata.contains("general.quantization_version") {
        r.warnings
            .push("quantized tensors but no general.quantization_version".into());
    }
    // Padding between and after tensors must be zero.
    let bytes = file.bytes();
    let a = file.alignment as u64;
    for t in &file.tensors {
        let start = file.data_offset + t.offset + t.nbytes;
        let end = align_up(start, a).unwrap_or(start).min(file.file_size());
        if bytes[start as usize..end as usize].iter().any(|&b| b != 0) {
            r.errors
                .push(format!("non-zero padding after tensor '{}'", t.name));
        }
    }
    let results: Vec<(String, Option<(u64, u64)>)> = file
        .tensors
        .par_iter()
        .map(|t| (t.name.clone(), count_non_finite(t.ty, file.tensor_data(t))))
        .collect();
    let big_endian = file.byte_order == crate::gguf::ByteOrder::Big;
    for (name, res) in results {
        match res {
            _ if big_endian => r.not_scanned.push(name),
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
