//! The torch computations of the reference converter against torch's own outputs
//! (`testdata/golden/torch-math/`, made by `conformance/make_torch_exp_table.py` and
//! `conformance/make_torch_math_golden.py`).
//!
//! `exp` and `erfinv` are checked on MKL's two matched paths: the golden holds the sha256 of torch's output
//! for each run of 2^20 consecutive bit patterns (all 4096 runs for AVX-512; the 576 runs of
//! magnitudes [2^-27, 128) for the generic path; for `erfinv` the 1,016 runs of [0, 1), and
//! Gemma 3n's normal quantile on every decimal of up to four digits and every 4096th float of
//! [0, 1]). The default tests check a spread sample; `exp_on_every_measured_input` and
//! `erfinv_on_every_input` (ignored by default) check them all. `softplus` (Gemma 4's audio
//! scales, `conformance/make_torch_softplus_golden.py`) is checked on every bfloat16 value as
//! float32, in one tensor (torch's vector loop) and in short ones (its scalar loop), on every
//! float16 value, on float32 values spread over the ranges checkpoints hold in one tensor and
//! in tensors of every length from 1 to 97 (vector body and scalar tail), and on float32 bit
//! patterns in chunks of 2^24 (every 32nd chunk by default; `softplus_on_every_input`,
//! ignored by default, checks all 2^32).

use ggufkit::quantizers::{f16_to_f32, f32_to_bf16, f32_to_f16};
use ggufkit_converters::hf::torch_math::{
    torch_erfinv_f32_on, torch_exp_f32_on, torch_normal_icdf_f32, torch_pow_f32,
    torch_softplus_f16, torch_softplus_f32, MklPath,
};
use ggufkit_testsupport::golden::read_json;
use ggufkit_testsupport::testdata;
use rayon::prelude::*;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

const RUN: u64 = 1 << 20;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha_f32(v: impl Iterator<Item = f32>) -> String {
    let mut h = Sha256::new();
    for x in v {
        h.update(x.to_le_bytes());
    }
    hex(&h.finalize())
}

/// The golden runs of a path: (run index, sha256), a run being 2^20 consecutive bit
/// patterns, listed 16 at a time from each `first_runs` entry.
fn exp_golden(path: &str) -> Vec<(usize, String)> {
    let j = read_json(&testdata(&format!(
        "golden/torch-math/exp-chunks-{path}.json"
    )));
    let firsts = j["first_runs"].as_array().expect("first_runs");
    let hashes = j["chunks"].as_array().expect("chunks");
    assert_eq!(hashes.len(), 16 * firsts.len());
    hashes
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let run = firsts[i / 16].as_u64().unwrap() as usize + i % 16;
            (run, h.as_str().unwrap().to_string())
        })
        .collect()
}

/// The runs among `golden` (every `step`-th) whose torch exp differs from ours.
fn exp_mismatches(path: MklPath, golden: &[(usize, String)], step: usize) -> Vec<usize> {
    golden
        .par_iter()
        .step_by(step)
        .filter(|(r, want)| {
            let start = *r as u64 * RUN;
            let got = sha_f32(
                (start..start + RUN).map(|b| torch_exp_f32_on(path, f32::from_bits(b as u32))),
            );
            got != *want
        })
        .map(|(r, _)| *r)
        .collect()
}

/// MKL's generic path (the default): every 4th run of the measured magnitudes
/// [2^-27, 128), both signs.
#[test]
fn exp_matches_torch_generic_path() {
    let golden = exp_golden("compatible");
    let bad = exp_mismatches(MklPath::Compatible, &golden, 4);
    assert!(bad.is_empty(), "torch exp differs on runs {bad:x?}");
}

/// The AVX-512 path: every 16th run of all 4096 (the extremes and every exponent).
#[test]
fn exp_matches_torch_avx512_path() {
    let golden = exp_golden("avx512");
    assert_eq!(golden.len(), 4096);
    let bad = exp_mismatches(MklPath::Avx512, &golden, 16);
    assert!(bad.is_empty(), "torch exp differs on runs {bad:x?}");
}

#[test]
#[ignore = "4.6 billion evaluations, run by hand: cargo test --release -p ggufkit-converters --test suite -- --ignored torch_math_golden"]
fn exp_on_every_measured_input() {
    for (name, path) in [
        ("compatible", MklPath::Compatible),
        ("avx512", MklPath::Avx512),
    ] {
        let bad = exp_mismatches(path, &exp_golden(name), 1);
        assert!(bad.is_empty(), "{name}: torch exp differs on runs {bad:x?}");
    }
}

fn erfinv_golden(path: &str) -> Json {
    read_json(&testdata(&format!("golden/torch-math/erfinv-{path}.json")))
}

/// The runs of 2^20 bit patterns of [0, 1) among `runs` whose torch erfinv differs from ours.
fn erfinv_mismatches(path: MklPath, golden: &Json, runs: &[usize]) -> Vec<usize> {
    let hashes = golden["chunks"].as_array().expect("chunks");
    assert_eq!(hashes.len(), 1016, "runs of [0, 1)");
    runs.par_iter()
        .copied()
        .filter(|&r| {
            let start = r as u64 * RUN;
            let end = (start + RUN).min(0x3f80_0000);
            let got =
                sha_f32((start..end).map(|b| torch_erfinv_f32_on(path, f32::from_bits(b as u32))));
            got != hashes[r].as_str().unwrap()
        })
        .collect()
}

/// torch's float32 erfinv on both MKL paths: every 32nd run of 2^20 consecutive inputs of
/// [0, 0.5) (the exponents down to 2^-126 and the subnormals) and every input of [0.5, 1)
/// (the last eight runs: erfinv from 0.48 to 3.9, where the series nears 1 and the continued
/// fraction takes over), and the negative half by symmetry.
#[test]
fn erfinv_matches_torch() {
    for (name, path) in [
        ("avx512", MklPath::Avx512),
        ("compatible", MklPath::Compatible),
    ] {
        let golden = erfinv_golden(name);
        let mut runs: Vec<usize> = (0..1008).step_by(32).collect();
        runs.extend(1008..1016);
        let bad = erfinv_mismatches(path, &golden, &runs);
        assert!(
            bad.is_empty(),
            "{name}: torch erfinv differs on runs {bad:x?}"
        );
        for b in (0u32..0x3f80_0000).step_by(9973) {
            let y = f32::from_bits(b);
            let (pos, neg) = (torch_erfinv_f32_on(path, y), torch_erfinv_f32_on(path, -y));
            assert_eq!(neg.to_bits(), (-pos).to_bits(), "{name}: erfinv(-{y})");
        }
    }
}

#[test]
#[ignore = "2 billion evaluations, run by hand: cargo test --release -p ggufkit-converters --test suite -- --ignored erfinv_on_every_input"]
fn erfinv_on_every_input() {
    for (name, path) in [
        ("avx512", MklPath::Avx512),
        ("compatible", MklPath::Compatible),
    ] {
        let all: Vec<usize> = (0..1016).collect();
        let bad = erfinv_mismatches(path, &erfinv_golden(name), &all);
        assert!(
            bad.is_empty(),
            "{name}: torch erfinv differs on runs {bad:x?}"
        );
    }
}

/// `Normal(0, 1).icdf(p)` (Gemma 3n's activation sparsity scales) on the default path: every
/// decimal with up to four digits, every 4096th float32 of [0, 1], and the extremes.
#[test]
fn normal_icdf_matches_torch() {
    let j = erfinv_golden("avx512");
    let mut decimals: Vec<f64> = (1..=4u32)
        .flat_map(|n| {
            let d = 10u64.pow(n);
            (0..=d).map(move |k| k as f64 / d as f64)
        })
        .collect();
    decimals.sort_by(f64::total_cmp);
    decimals.dedup();
    let sets: [(&str, Vec<f32>); 3] = [
        ("decimals", decimals.iter().map(|&d| d as f32).collect()),
        (
            "strided",
            (0u32..=0x3f80_0000)
                .step_by(4096)
                .map(f32::from_bits)
                .collect(),
        ),
        (
            "extremes",
            vec![
                0.0,
                1.0,
                1e-45,
                // Python's literals are doubles, rounded to float32 by numpy.
                1e-30f64 as f32,
                1e-8f64 as f32,
                0.5,
                1.0 - 2f32.powi(-24),
                1.0 - 2f32.powi(-23),
            ],
        ),
    ];
    for (name, ps) in sets {
        let want = &j["icdf"][name];
        assert_eq!(want["n"].as_u64(), Some(ps.len() as u64), "{name}: inputs");
        let got = sha_f32(ps.iter().map(|&p| torch_normal_icdf_f32(p)));
        assert_eq!(got, want["sha256"].as_str().unwrap(), "icdf on {name}");
    }
}

fn ops() -> Json {
    read_json(&testdata("golden/torch-math/ops.json"))
}

fn case<'a>(j: &'a Json, name: &str) -> &'a str {
    j["cases"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no case {name}"))
}

/// Llama 3's RoPE frequencies for every even head size up to 512 (every tensor length from
/// 1 to 256: the vector body, the scalar tail and both) and a sweep of exponents.
#[test]
fn pow_matches_torch() {
    let j = ops();
    let bases: Vec<f64> = j["bases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect();
    let sweep: Vec<f32> = (0u64..)
        .map(|k| k * 4099)
        .take_while(|&b| b < 0x3f80_0000)
        .map(|b| f32::from_bits(b as u32))
        .collect();
    assert_eq!(sweep.len(), 259_906);
    let mut problems = Vec::new();
    for (i, &b) in bases.iter().enumerate() {
        let base = b as f32;
        let rope: Vec<f32> = (2..514u32)
            .step_by(2)
            .flat_map(|dim| {
                let e: Vec<f32> = (0..dim).step_by(2).map(|k| k as f32 / dim as f32).collect();
                torch_pow_f32(base, &e)
            })
            .collect();
        if sha_f32(rope.into_iter()) != case(&j, &format!("pow-rope/{i}")) {
            problems.push(format!("pow-rope base {b}"));
        }
        if sha_f32(torch_pow_f32(base, &sweep).into_iter()) != case(&j, &format!("pow-sweep/{i}")) {
            problems.push(format!("pow-sweep base {b}"));
        }
        let parts = sweep[..1011 * 257]
            .chunks(1011)
            .flat_map(|c| torch_pow_f32(base, c));
        if sha_f32(parts) != case(&j, &format!("pow-sweep-1011/{i}")) {
            problems.push(format!("pow-sweep-1011 base {b}"));
        }
    }
    assert!(problems.is_empty(), "differences: {problems:?}");
}

/// The f32 → f16 and f32 → bf16 roundings of the reference's output types, on 65,536 inputs
/// spread over every exponent (f16: the non-NaN ones).
#[test]
fn half_and_bfloat_roundings_match() {
    let j = ops();
    let xs: Vec<f32> = (0u64..65536)
        .map(|k| f32::from_bits((k * 65537 + 3) as u32))
        .collect();
    // NaNs aside: numpy keeps a NaN's payload in f16, ggml writes 0x7e00 with the sign.
    let f16: Vec<u8> = xs
        .iter()
        .filter(|x| !x.is_nan())
        .flat_map(|&x| f32_to_f16(x).to_le_bytes())
        .collect();
    let bf16: Vec<u8> = xs
        .iter()
        .flat_map(|&x| f32_to_bf16(x).to_le_bytes())
        .collect();
    assert_eq!(hex(&Sha256::digest(&f16)), case(&j, "f16-round"));
    assert_eq!(hex(&Sha256::digest(&bf16)), case(&j, "bf16-round"));
}

/// `softplus` of every finite bfloat16 value (as float32) and every finite float16 value, in
/// the tensors the generator gave torch, against the sha256 of torch's outputs.
#[test]
fn softplus_matches_torch() {
    let j = read_json(&testdata("golden/torch-math/softplus.json"));
    let bf: Vec<f32> = (0..=u16::MAX)
        .map(|b| f32::from_bits(u32::from(b) << 16))
        .filter(|x| x.is_finite())
        .collect();
    assert_eq!(bf.len() as u64, j["bf16_values_f32"]["n"].as_u64().unwrap());
    assert_eq!(
        sha_f32(torch_softplus_f32(&bf).into_iter()),
        j["bf16_values_f32"]["sha256"].as_str().unwrap(),
        "one tensor (the vector loop)"
    );
    let len = j["bf16_values_f32_small"]["len"].as_u64().unwrap() as usize;
    let small = bf.chunks(len).flat_map(torch_softplus_f32);
    assert_eq!(
        sha_f32(small),
        j["bf16_values_f32_small"]["sha256"].as_str().unwrap(),
        "tensors of {len} (the scalar loop)"
    );
    let h: Vec<u16> = (0..=u16::MAX)
        .filter(|&b| f16_to_f32(b).is_finite())
        .collect();
    assert_eq!(h.len() as u64, j["f16_values"]["n"].as_u64().unwrap());
    let mut d = Sha256::new();
    for y in torch_softplus_f16(&h) {
        d.update(y.to_le_bytes());
    }
    assert_eq!(
        hex(&d.finalize()),
        j["f16_values"]["sha256"].as_str().unwrap(),
        "float16"
    );
}

/// A golden string field.
fn field<'a>(j: &'a Json, key: &str) -> &'a str {
    j[key]
        .as_str()
        .unwrap_or_else(|| panic!("softplus golden: no {key}"))
}

/// `softplus` of float32 values spread over the ranges checkpoints hold, as one tensor and
/// as tensors of lengths 1, 2, …, 97, 1, 2, … (the generator's split), against torch.
#[test]
fn softplus_f32_ranges_match_torch() {
    let j = read_json(&testdata("golden/torch-math/softplus.json"));
    let ranges = j["f32_ranges"].as_array().expect("f32_ranges");
    assert!(ranges.len() >= 4);
    for r in ranges {
        let (lo, hi) = (r["lo"].as_f64().unwrap(), r["hi"].as_f64().unwrap());
        let n = r["n"].as_u64().unwrap() as usize;
        let split_max = r["split_max"].as_u64().unwrap() as usize;
        let xs: Vec<f32> = (0..n)
            .map(|j| (lo + (hi - lo) * (j as f64 / (n - 1) as f64)) as f32)
            .collect();
        assert_eq!(
            sha_f32(torch_softplus_f32(&xs).into_iter()),
            field(r, "one"),
            "[{lo}, {hi}] in one tensor"
        );
        let mut split = Vec::with_capacity(n);
        let (mut at, mut k) = (0, 0);
        while at < n {
            let len = (k % split_max + 1).min(n - at);
            split.extend(torch_softplus_f32(&xs[at..at + len]));
            at += len;
            k += 1;
        }
        assert_eq!(
            sha_f32(split.into_iter()),
            field(r, "split"),
            "[{lo}, {hi}] in tensors of 1 to {split_max}"
        );
    }
}

/// The chunks of 2^24 float32 bit patterns (every `step`-th) whose softplus, as one tensor
/// (torch's vector loop throughout), differs from torch's; NaNs are compared as NaNs.
fn softplus_chunk_mismatches(step: usize) -> Vec<usize> {
    let j = read_json(&testdata("golden/torch-math/softplus.json"));
    let len = j["f32_chunks"]["len"].as_u64().unwrap();
    let hashes = j["f32_chunks"]["sha256"].as_array().expect("f32_chunks");
    assert_eq!(hashes.len() as u64 * len, 1 << 32);
    let wanted: Vec<(usize, &str)> = hashes
        .iter()
        .enumerate()
        .step_by(step)
        .map(|(k, h)| (k, h.as_str().unwrap()))
        .collect();
    wanted
        .par_iter()
        .filter(|(k, want)| {
            let start = *k as u64 * len;
            let xs: Vec<f32> = (start..start + len)
                .map(|b| f32::from_bits(b as u32))
                .collect();
            let got = sha_f32(torch_softplus_f32(&xs).into_iter().map(|y| {
                if y.is_nan() {
                    f32::from_bits(0x7fc0_0000)
                } else {
                    y
                }
            }));
            got != *want
        })
        .map(|(k, _)| *k)
        .collect()
}

/// Every 32nd chunk of float32 bit patterns: both signs, every eighth exponent range.
#[test]
fn softplus_f32_chunks_match_torch() {
    let bad = softplus_chunk_mismatches(32);
    assert!(bad.is_empty(), "torch softplus differs on chunks {bad:x?}");
}

#[test]
#[ignore = "2^32 evaluations, run by hand: cargo test --release -p ggufkit-converters --test suite -- --ignored softplus_on_every_input"]
fn softplus_on_every_input() {
    let bad = softplus_chunk_mismatches(1);
    assert!(bad.is_empty(), "torch softplus differs on chunks {bad:x?}");
}
