//! Quantizer throughput: MB/s of f32 input per type, one thread and all threads, plain and
//! imatrix paths. Run with `cargo bench -p ggufkit-quantizers --bench kernels`; prints a
//! Markdown table. `KERNEL_BENCH_MB` sets the input size (default 64), `KERNEL_BENCH_TYPES`
//! (comma-separated names, e.g. `q4_0,q6_K`) limits the types, and
//! `KERNEL_BENCH_PORTABLE=1` runs the portable kernels instead of the AVX2 ones.
//! `KERNEL_BENCH_CPU=1` (Linux) divides by the process's CPU time instead of the wall time:
//! the figure to compare on a loaded machine, and against the reference measured the same
//! way (its `ggml_quantize_chunk` is single-threaded). The IQ1–IQ3 types need an imatrix or
//! are slow: give them a small `KERNEL_BENCH_MB` (e.g. 4). `KERNEL_BENCH_DUMP=DIR` also
//! writes the input (`src.f32`, `imatrix.f32`) and `ours.json` (per type: the figures and the
//! sha256 of the quantized bytes) for `scripts/bench-kernels-ref.py`, which times llama.cpp's
//! `ggml_quantize_chunk` on the same input (`scripts/bench-kernels.sh` runs both).

use std::time::Instant;

use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use ggufkit_quantizers::{all_types, quantize_rows, row_size};

const N_PER_ROW: usize = 4096;

/// Deterministic, roughly normal test data (sum of uniforms from an LCG).
fn data(n: usize) -> Vec<f32> {
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 40) as f32) / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| (next() + next() + next() + next() - 2.0) * 0.05)
        .collect()
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`, 100 ticks/s).
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    // Fields 14 and 15 of the file; `after` starts at field 3.
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}

/// Seconds per call of `f`, best of `runs` measurements; a measurement repeats `f` until it
/// has taken at least 0.2 s (CPU time is counted in 10 ms ticks).
fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    let cpu = std::env::var("KERNEL_BENCH_CPU").is_ok_and(|v| v == "1");
    (0..runs)
        .map(|_| {
            let (t, c) = (Instant::now(), cpu_secs());
            let mut calls = 0u32;
            loop {
                f();
                calls += 1;
                let spent = if cpu {
                    cpu_secs() - c
                } else {
                    t.elapsed().as_secs_f64()
                };
                if spent >= 0.2 {
                    return spent / calls as f64;
                }
            }
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mb: usize = std::env::var("KERNEL_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let only: Option<Vec<String>> = std::env::var("KERNEL_BENCH_TYPES")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.split(',').map(|t| t.trim().to_lowercase()).collect());
    if std::env::var("KERNEL_BENCH_PORTABLE").is_ok_and(|v| v == "1") {
        ggufkit_quantizers::force_portable(true);
    }
    let rows = (mb << 20) / 4 / N_PER_ROW;
    let src = data(rows * N_PER_ROW);
    let imatrix: Vec<f32> = data(N_PER_ROW).iter().map(|x| x * x + 1e-3).collect();
    let bytes = (src.len() * 4) as f64 / 1e6;
    let dump = std::env::var_os("KERNEL_BENCH_DUMP").map(std::path::PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).unwrap();
        let le = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        std::fs::write(d.join("src.f32"), le(&src)).unwrap();
        std::fs::write(d.join("imatrix.f32"), le(&imatrix)).unwrap();
    }
    let mut report = Map::new();
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let all = rayon::ThreadPoolBuilder::new().build().unwrap();
    let threads = all.current_num_threads();
    println!("input: {rows} rows x {N_PER_ROW} f32 ({bytes:.0} MB); MB/s of f32 input, best of 3");
    println!(
        "| type | 1 thread | {threads} threads | 1 thread, imatrix | {threads} threads, imatrix |"
    );
    println!("|---|---:|---:|---:|---:|");
    for t in all_types() {
        if t.quantize.is_none() || t.ty == ggufkit_quantizers::GgmlType::F32 {
            continue;
        }
        if only
            .as_ref()
            .is_some_and(|o| !o.contains(&t.name.to_lowercase()))
        {
            continue;
        }
        let Some(rs) = row_size(t.ty, N_PER_ROW) else {
            continue;
        };
        let mut dst = vec![0u8; rs * rows];
        let mut digests = Map::new();
        let mut run = |pool: &rayon::ThreadPool, im: Option<&[f32]>| {
            let secs = best_of(3, || {
                pool.install(|| quantize_rows(t.ty, &src, &mut dst, N_PER_ROW, im).unwrap())
            });
            let key = if im.is_some() { "imatrix" } else { "plain" };
            digests.insert(key.into(), json!(format!("{:x}", Sha256::digest(&dst))));
            format!("{:.0}", bytes / secs)
        };
        let plain1 = if t.requires_imatrix {
            "-".into()
        } else {
            run(&single, None)
        };
        let plain_n = if t.requires_imatrix {
            "-".into()
        } else {
            run(&all, None)
        };
        let (im1, im_n) = if t.uses_imatrix {
            (run(&single, Some(&imatrix)), run(&all, Some(&imatrix)))
        } else {
            ("-".into(), "-".into())
        };
        println!("| {} | {plain1} | {plain_n} | {im1} | {im_n} |", t.name);
        let mut entry = Map::new();
        for (k, v) in [
            ("plain_1", &plain1),
            ("plain_n", &plain_n),
            ("imatrix_1", &im1),
            ("imatrix_n", &im_n),
        ] {
            entry.insert(k.into(), v.parse::<f64>().map_or(Json::Null, |x| json!(x)));
        }
        entry.insert("sha256".into(), Json::Object(digests));
        entry.insert("id".into(), json!(t.ty.id()));
        report.insert(t.name.to_string(), Json::Object(entry));
    }
    if let Some(d) = &dump {
        let all =
            json!({"rows": rows, "n_per_row": N_PER_ROW, "threads": threads, "types": report});
        std::fs::write(
            d.join("ours.json"),
            serde_json::to_string_pretty(&all).unwrap(),
        )
        .unwrap();
    }
}
