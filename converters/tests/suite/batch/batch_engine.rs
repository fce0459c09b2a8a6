//! The batch engine against the single-output writer: every output written in one pass from
//! shared f32 values must be byte-identical to writing it alone, for HF, GGUF (f32 and f16)
//! and legacy sources, plain and quantized types, with an ample and with a starved memory
//! budget; and with an ample budget each shared source tensor is decoded exactly once.

use ggufkit_testsupport::golden as support;

use std::path::{Path, PathBuf};

use ggufkit::ir::Model;
use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, Stats as EngineStats};
use ggufkit::quantize::{plan, FileType, QuantizeOptions};
use ggufkit::write::{write_model, WriteOptions};
use ggufkit_converters::batch::plan::{OutputOptions, Source, SourceOptions, Target};
use support::*;

struct Case {
    source: Source,
    targets: Vec<&'static str>,
}

/// Writes every target alone and all together; compares; returns the engine's counters
/// and the largest f32 tensor.
fn check(name: &str, case: &Case, budget: u64) -> (EngineStats, u64) {
    let work = scratch(&format!("engine-{name}-{budget}"));
    let base = &case.source.base().unwrap().model;
    let mut plans = Vec::new();
    let mut singles = Vec::new();
    for (i, t) in case.targets.iter().enumerate() {
        let p = case
            .source
            .plan_output(Target::parse(t).unwrap(), &OutputOptions::default())
            .unwrap_or_else(|e| panic!("{name} {t}: {e}"));
        let single = work.join(format!("single-{i}.gguf"));
        write_model(&p.model, &single, &WriteOptions::default()).unwrap();
        singles.push(single);
        let shared = pipeline::shared_tensors(&p.model);
        let quantizable = p.model.tensors.iter().any(|t| t.dims.len() >= 2);
        // Mapped copies (an f16 source written as f16) need no shared stage.
        let all_mapped = p
            .model
            .tensors
            .iter()
            .all(|t| matches!(t.data, ggufkit::ir::TensorData::Mapped { .. }));
        assert!(
            shared > 0 || !quantizable || all_mapped,
            "{name} {t}: nothing shared"
        );
        plans.push(OutputPlan {
            shards: vec![ShardPlan {
                path: work.join(format!("batch-{i}.gguf")),
                model: p.model,
            }],
            options: pipeline::WriteOptions {
                inputs: case.source.files(),
                overwrite: false,
                sync: false,
                digest: true,
                ..Default::default()
            },
        });
    }
    let (results, stats) = pipeline::execute(&plans, &ExecuteOptions { budget }, &());
    for ((r, single), t) in results.into_iter().zip(&singles).zip(&case.targets) {
        let w = r.unwrap_or_else(|e| panic!("{name} {t}: {e}"));
        let a = std::fs::read(single).unwrap();
        let b = std::fs::read(&w.files[0].path).unwrap();
        assert!(
            a == b,
            "{name} {t}: batch output differs from the single output"
        );
        assert_eq!(w.size(), a.len() as u64);
    }
    let largest = base
        .tensors
        .iter()
        .map(|t| t.n_elements() * 4)
        .max()
        .unwrap_or(0);
    std::fs::remove_dir_all(&work).unwrap();
    (stats, largest)
}

fn hf(dir: &str) -> Source {
    // dry_run tolerates the tokenizer (not converted yet on this branch); the tensors are
    // what the engine shares.
    Source::open(
        &testdata(dir),
        SourceOptions {
            dry_run: true,
            ..Default::default()
        },
    )
    .unwrap()
}

fn legacy(file: &str) -> Source {
    Source::open(
        &testdata(file),
        SourceOptions {
            gqa: Some(2),
            eps: Some(1e-5),
            ..Default::default()
        },
    )
    .unwrap()
}

/// An f16 GGUF made from the f32 test file (what llama-quantize F16 writes).
fn f16_gguf(tag: &str) -> PathBuf {
    let dir = scratch(&format!("engine-f16-src-{tag}")).keep();
    let p = dir.join("llama-spm-f16.gguf");
    let f = ggufkit::gguf::GgufFile::open(&golden_gguf("llama-spm", "convert-f32")).unwrap();
    let q = plan(
        &Model::from_gguf(&f),
        &QuantizeOptions::new(FileType::parse("F16").unwrap()),
    )
    .unwrap();
    write_model(&q.model, &p, &WriteOptions::default()).unwrap();
    p
}

fn cases(tag: &str) -> Vec<(&'static str, Case)> {
    let gguf = |p: &Path| Source::open(p, SourceOptions::default()).unwrap();
    vec![
        (
            "hf-llama-spm",
            Case {
                source: hf("hf/llama-spm"),
                targets: vec!["f16", "bf16", "q8_0", "f32", "q4_k_m", "q2_k", "q6_k"],
            },
        ),
        (
            "hf-qwen2",
            Case {
                source: hf("hf/qwen2"),
                targets: vec!["f16", "q8_0", "q4_0", "q5_k_m"],
            },
        ),
        (
            "hf-phi3",
            Case {
                source: hf("hf/phi3"),
                targets: vec!["bf16", "q4_k_s", "q3_k_m"],
            },
        ),
        (
            "gguf-f32",
            Case {
                source: gguf(&golden_gguf("llama-spm", "convert-f32")),
                targets: vec!["q8_0", "q4_k_m", "q2_k", "iq4_nl"],
            },
        ),
        (
            "gguf-f16",
            Case {
                source: gguf(&f16_gguf(tag)),
                targets: vec!["q8_0", "q4_k_m", "q5_0", "tq2_0"],
            },
        ),
        (
            "legacy-q4_0",
            Case {
                source: legacy("legacy/ggjt-v3-q4_0.bin"),
                targets: vec!["auto", "f16", "q8_0", "q4_k_m"],
            },
        ),
    ]
}

#[test]
fn one_pass_outputs_equal_single_outputs_and_decode_each_tensor_once() {
    let mut shared_products = 0;
    for (name, case) in cases("ample") {
        let (st, _) = check(name, &case, 1 << 30);
        assert!(st.shared_keys > 0, "{name}: no shared tensor");
        assert_eq!(
            st.decoded, st.shared_keys,
            "{name}: a tensor was decoded twice"
        );
        assert_eq!(st.computed_products, st.products, "{name}: computed twice");
        assert_eq!(st.evictions, 0, "{name}");
        shared_products += st.product_uses - st.products;
    }
    // Q4_K_M, Q2_K and Q6_K all write output.weight as Q6_K: computed once.
    assert!(shared_products > 0);
}

#[test]
fn a_starved_budget_gives_the_same_bytes_with_bounded_memory() {
    for (name, case) in cases("starved") {
        let (st, largest) = check(name, &case, 1);
        let (decoded, peak) = (st.decoded, st.peak_cache_bytes);
        // One window at a time, each with one tensor: at most the products of one base
        // tensor (each no larger than its f32 values) are held.
        assert!(
            peak <= case.targets.len() as u64 * largest,
            "{name}: {peak} bytes of f32 values held (largest tensor {largest})"
        );
        assert!(decoded > 0, "{name}");
    }
}
