//! gguf-quantize's budget mode (`--target-size`, `--target-bpw`) and `gguf-inspect compare`.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::Path;
use std::process::Command;

use support::*;

const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");
const INSPECT: &str = env!("CARGO_BIN_EXE_gguf-inspect");

fn run(bin: &str, args: &[&str]) -> std::process::Output {
    let o = Command::new(bin).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{bin} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The total imatrix-weighted error `gguf-inspect compare` reports.
fn weighted_error(quant: &Path, source: &Path, imatrix: &Path) -> f64 {
    let o = run(
        INSPECT,
        &[
            "compare",
            s(quant),
            s(source),
            "--imatrix",
            s(imatrix),
            "--json",
        ],
    );
    let j = json(&o);
    assert_eq!(j["ok"], true, "{j}");
    j["total"]["weighted_error"].as_f64().unwrap()
}

/// `gguf-quantize -q --imatrix IMATRIX INPUT OUT MIX`: llama-quantize's mix, byte for byte.
fn quantize_mix(imatrix: &Path, input: &Path, out: &Path, mix: &str) {
    run(
        QUANTIZE,
        &["-q", "--imatrix", s(imatrix), s(input), s(out), mix],
    );
}

/// `gguf-quantize -q --imatrix IMATRIX --target-size SIZE INPUT OUT [TYPE]`.
fn quantize_to_size(size: u64, imatrix: &Path, input: &Path, out: &Path, ty: Option<&str>) {
    let target = size.to_string();
    let mut a = vec![
        "-q",
        "--imatrix",
        s(imatrix),
        "--target-size",
        &target,
        s(input),
        s(out),
    ];
    a.extend(ty);
    run(QUANTIZE, &a);
}

#[test]
fn target_size_beats_q4_k_m_at_its_own_size() {
    let dir = scratch("budget-q4km");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let imatrix = testdata("golden/llama-spm/files/imatrix.gguf");
    let reference = dir.join("q4km.gguf");
    quantize_mix(&imatrix, &input, &reference, "Q4_K_M");
    let size = std::fs::metadata(&reference).unwrap().len();
    let ours = dir.join("budget.gguf");
    quantize_to_size(size, &imatrix, &input, &ours, None);
    let got = std::fs::metadata(&ours).unwrap().len();
    assert!(got <= size, "{got} > {size}");
    assert!(got as f64 >= size as f64 * 0.99, "{got} far below {size}");
    let (e_ref, e_ours) = (
        weighted_error(&reference, &input, &imatrix),
        weighted_error(&ours, &input, &imatrix),
    );
    assert!(e_ours < e_ref, "budget {e_ours} vs Q4_K_M {e_ref}");
    // The file says how it was made.
    let f = ggufkit::gguf::GgufFile::open(&ours).unwrap();
    assert_eq!(
        f.metadata.get_str("ggufkit.quantize.budget").unwrap(),
        format!("size={size}")
    );
    assert!(f
        .metadata
        .get_str("ggufkit.quantize.tool")
        .unwrap()
        .starts_with("ggufkit gguf-quantize "));
    assert_eq!(
        f.metadata.get_str("ggufkit.quantize.metric").unwrap(),
        "estimated KL divergence (imatrix-weighted); total error at most Q4_K_M's where the budget allows"
    );
    // The default path writes no such key.
    let r = ggufkit::gguf::GgufFile::open(&reference).unwrap();
    assert!(r.metadata.iter().all(|(k, _)| !k.starts_with("ggufkit.")));
}

#[test]
fn dry_run_prints_each_tensors_type_error_and_size() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let o = run(QUANTIZE, &["--dry-run", "--target-bpw", "4.5", s(&input)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("blk.0.ffn_down.weight"), "{text}");
    assert!(text.contains(" error "), "{text}");
    assert!(text.contains("budget bpw=4.5: file size"), "{text}");
    // Norms are copied and carry no error.
    let norm = text
        .lines()
        .find(|l| l.contains("blk.0.attn_norm.weight"))
        .unwrap();
    assert!(norm.contains("(copy)") && !norm.contains("error"), "{norm}");

    let o = run(
        QUANTIZE,
        &["--dry-run", "--json", "--target-bpw", "4.5", s(&input)],
    );
    let j = json(&o);
    let n: u64 = j["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .product::<u64>()
        })
        .sum();
    let out_bytes = j["out_bytes"].as_u64().unwrap();
    assert!(out_bytes as f64 * 8.0 / n as f64 <= 4.5, "{j}");
    assert!(out_bytes as f64 * 8.0 / n as f64 > 4.0, "{j}");
    let budgeted: Vec<&serde_json::Value> = j["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["error"].is_null())
        .collect();
    assert!(budgeted.len() > 10, "{j}");
    assert!(budgeted.iter().all(|t| t["error"].as_f64().unwrap() >= 0.0));
    assert_eq!(j["budget"]["target"], "bpw=4.5");
    assert_eq!(j["budget"]["metric"], "estimated KL divergence");
    // Without TYPE the base is the largest named mix that fits 4.5 bits per weight here
    // (Q4_K_M's does not).
    assert_eq!(j["budget"]["reference"]["ftype"], "Q3_K_L");
    assert_eq!(j["budget"]["reference"]["fits"], true);
    assert!(
        j["budget"]["reference"]["reference_error"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // The tensor-type override is honoured: attn_v stays what it was told.
    let o = run(
        QUANTIZE,
        &[
            "--dry-run",
            "--json",
            "--target-bpw",
            "3.5",
            "--tensor-type",
            "attn_v=q8_0",
            s(&input),
        ],
    );
    let j = json(&o);
    for t in j["tensors"].as_array().unwrap() {
        if t["name"].as_str().unwrap().contains("attn_v") {
            assert_eq!(t["to"], "q8_0", "{t}");
            assert!(t["error"].is_null());
        }
    }
}

#[test]
fn budget_errors_are_usage_or_run_failures() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let code = |args: &[&str]| {
        Command::new(QUANTIZE)
            .args(args)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(
        code(&["--dry-run", "--target-size", "12X", s(&input)]),
        Some(2)
    );
    assert_eq!(
        code(&["--dry-run", "--target-bpw", "-1", s(&input)]),
        Some(2)
    );
    assert_eq!(
        code(&["--dry-run", "--budget-types", "q4_k", s(&input), "Q4_K_M"]),
        Some(2)
    );
    // Below the smallest possible file.
    assert_eq!(
        code(&["--dry-run", "--target-size", "10K", s(&input)]),
        Some(1)
    );
}

#[test]
fn compare_reports_zero_for_a_copy_and_errors_for_a_quant() {
    let dir = scratch("compare-cli");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let j = json(&run(INSPECT, &["compare", s(&input), s(&input), "--json"]));
    assert_eq!(j["total"]["squared_error"], 0.0);
    assert!(j["total"]["weighted_error"].is_null());
    let q = dir.join("q8.gguf");
    run(QUANTIZE, &["-q", s(&input), s(&q), "Q8_0"]);
    let o = run(INSPECT, &["compare", s(&q), s(&input)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("blk.0.attn_q.weight") && text.contains("total: "),
        "{text}"
    );
    let j = json(&run(INSPECT, &["compare", s(&q), s(&input), "--json"]));
    let rel = j["total"]["relative_error"].as_f64().unwrap();
    // Q8_0 keeps about 8 bits: a relative error between 0.1 % and 1 %.
    assert!(rel > 1e-3 && rel < 1e-2, "{rel}");
    // A source that lacks the tensors is a problem (exit 1), not a crash.
    let other = conv::golden_gguf("qwen2", "convert-f32");
    let o = Command::new(INSPECT)
        .args(["compare", s(&q), s(&other)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_routed_expert_weighs_its_token_share_unless_told_otherwise() {
    let input = conv::golden_gguf("qwen3moe", "convert-f32");
    let md = ggufkit::gguf::GgufFile::open(&input).unwrap().metadata;
    let int = |k: &str| md.get(k).and_then(|v| v.as_int()).unwrap() as f64;
    let share = int("qwen3moe.expert_used_count") / int("qwen3moe.expert_count");
    assert!(share < 1.0);
    // One candidate type, so both plans choose the same types and the errors compare.
    let plan = |extra: &[&str]| {
        // (The relative metric: the estimated KL divergence also feeds the share into the
        // residual stream's power, so every tensor's weight would change.)
        let mut a = vec![
            "--dry-run",
            "--json",
            "--target-bpw",
            "9",
            "--budget-types",
            "q8_0",
            "--budget-metric",
            "relative",
        ];
        a.extend_from_slice(extra);
        a.push(s(&input));
        let j = json(&run(QUANTIZE, &a));
        j["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| !t["error"].is_null())
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["error"].as_f64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let prior = plan(&[]);
    let dense = plan(&["--budget-expert-weight", "1"]);
    assert_eq!(prior.len(), dense.len());
    let mut experts = 0;
    for ((name, p), (name2, d)) in prior.iter().zip(&dense) {
        assert_eq!(name, name2);
        let want = if name.contains("_exps") {
            experts += 1;
            d * share
        } else {
            *d
        };
        assert!(
            (p - want).abs() <= 1e-9 * want.abs(),
            "{name}: {p} vs {want}"
        );
    }
    assert!(experts > 0);
    // The override is recorded with the metric.
    let dir = scratch("budget-expert-weight");
    let out = dir.join("out.gguf");
    run(
        QUANTIZE,
        &[
            "-q",
            "--target-bpw",
            "6",
            "--budget-expert-weight",
            "1",
            "--budget-metric",
            "relative",
            "--budget-no-cap",
            // (Without an imatrix the default anchors on the mix, and the key says so.)
            "--budget-anchor",
            "free",
            s(&input),
            s(&out),
        ],
    );
    let f = ggufkit::gguf::GgufFile::open(&out).unwrap();
    assert_eq!(
        f.metadata.get_str("ggufkit.quantize.metric").ok(),
        Some("relative squared error (expert weight 1)")
    );
    // Not a positive number: a usage error.
    for bad in ["0", "-1", "nan"] {
        let o = Command::new(QUANTIZE)
            .args([
                "--dry-run",
                "--target-bpw",
                "6",
                "--budget-expert-weight",
                bad,
                s(&input),
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
}

/// The per-tensor plan of a dry run: (name, out_bytes).
fn planned_bytes(args: &[&str]) -> Vec<(String, u64)> {
    let j = json(&run(QUANTIZE, args));
    j["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["out_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_kld_metric_gives_the_embedding_and_output_head_more_bytes_than_the_output_metric() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let bytes = |metric: &str| -> u64 {
        planned_bytes(&[
            "--dry-run",
            "--json",
            "--target-bpw",
            "4",
            "--budget-no-cap",
            // (Free: anchored on the mix, both metrics would keep most of its types.)
            "--budget-anchor",
            "free",
            "--budget-metric",
            metric,
            s(&input),
        ])
        .iter()
        .filter(|(n, _)| n == "token_embd.weight" || n == "output.weight")
        .map(|(_, b)| b)
        .sum()
    };
    let (kld, output) = (bytes("kld"), bytes("output"));
    assert!(kld > output, "kld {kld} vs output {output}");
}

#[test]
fn the_cap_keeps_the_error_at_most_the_reference_mixs_where_it_fits() {
    let dir = scratch("budget-cap");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let imatrix = testdata("golden/llama-spm/files/imatrix.gguf");
    for mix in ["Q3_K_M", "Q5_K_M"] {
        let reference = dir.join(format!("{mix}.gguf"));
        quantize_mix(&imatrix, &input, &reference, mix);
        // Room for llama-quantize's mix and our four keys: the cap is met.
        let size = std::fs::metadata(&reference).unwrap().len() + 1024;
        let target = size.to_string();
        let plan = |extra: &[&str]| -> serde_json::Value {
            let mut a = vec![
                "--dry-run",
                "--json",
                "--imatrix",
                s(&imatrix),
                "--target-size",
                &target,
            ];
            a.extend_from_slice(extra);
            a.push(s(&input));
            a.push(mix);
            json(&run(QUANTIZE, &a))["budget"].clone()
        };
        let budget = plan(&[]);
        let capped = &budget["reference"];
        assert_eq!(capped["ftype"], mix);
        assert_eq!(capped["fits"], true, "{capped}");
        let (e, r) = (
            capped["error"].as_f64().unwrap(),
            capped["reference_error"].as_f64().unwrap(),
        );
        assert!(e <= r, "{mix}: {e} > {r}");
        // The planned error is the one compare measures on the written file.
        let out = dir.join(format!("{mix}-budget.gguf"));
        quantize_to_size(size, &imatrix, &input, &out, Some(mix));
        let (measured, reference_measured) = (
            weighted_error(&out, &input, &imatrix),
            weighted_error(&reference, &input, &imatrix),
        );
        assert!(
            measured <= reference_measured * 1.02,
            "{mix}: {measured} vs {reference_measured}"
        );
        // Without the cap the estimated KL divergence is lower (or equal): the cap costs it.
        let free = plan(&["--budget-no-cap"]);
        let (kf, kc) = (
            free["total_error"].as_f64().unwrap(),
            budget["total_error"].as_f64().unwrap(),
        );
        assert!(kf <= kc * 1.01, "{mix}: free {kf} vs capped {kc}");
    }
}

/// `gguf-quantize -q [--imatrix IMATRIX] INPUT OUT MIX` and its file size.
fn mix_size(dir: &Path, input: &Path, imatrix: Option<&Path>, mix: &str) -> u64 {
    let out = dir.join(format!("{mix}-mix.gguf"));
    let mut a = vec!["-q"];
    if let Some(im) = imatrix {
        a.extend(["--imatrix", s(im)]);
    }
    a.extend([s(input), s(&out), mix]);
    run(QUANTIZE, &a);
    std::fs::metadata(&out).unwrap().len()
}

#[test]
fn without_a_type_the_budget_takes_the_nearest_named_mix_that_fits() {
    let dir = scratch("budget-nearest-mix");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    for mix in ["Q3_K_M", "Q5_K_M"] {
        let size = mix_size(&dir, &input, None, mix).to_string();
        let j = json(&run(
            QUANTIZE,
            &["--dry-run", "--json", "--target-size", &size, s(&input)],
        ));
        assert_eq!(j["ftype"], mix, "{}", j["budget"]);
        assert_eq!(j["budget"]["reference"]["ftype"], mix, "{}", j["budget"]);
    }
    // A TYPE given is kept.
    let size = mix_size(&dir, &input, None, "Q5_K_M").to_string();
    let j = json(&run(
        QUANTIZE,
        &[
            "--dry-run",
            "--json",
            "--target-size",
            &size,
            s(&input),
            "Q4_K_M",
        ],
    ));
    assert_eq!(j["budget"]["reference"]["ftype"], "Q4_K_M");
}

#[test]
fn dry_run_shows_the_mixs_type_and_estimate_beside_the_choice() {
    let dir = scratch("budget-mix-column");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    // Room for the mix and our keys.
    let size = (mix_size(&dir, &input, None, "Q4_K_M") + 1024).to_string();
    let args = ["--dry-run", "--target-size", &size, s(&input), "Q4_K_M"];
    let text = String::from_utf8_lossy(&run(QUANTIZE, &args).stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.contains("blk.0.ffn_down.weight"))
        .unwrap();
    assert!(
        line.contains(" error ") && line.contains("(mix q"),
        "{line}"
    );
    assert!(text.contains("for Q4_K_M's mix)"), "{text}");
    let mut a = vec!["--json"];
    a.extend(args);
    let j = json(&run(QUANTIZE, &a));
    let t = j["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "blk.0.ffn_down.weight")
        .unwrap()
        .clone();
    assert!(
        t["mix_type"].is_string() && t["mix_error"].as_f64().unwrap() > 0.0,
        "{t}"
    );
    let (ours, mix) = (
        j["budget"]["total_error"].as_f64().unwrap(),
        j["budget"]["mix_total_error"].as_f64().unwrap(),
    );
    // Anchored on the mix (no imatrix): only the bytes left over are spent, where they lower
    // the estimate.
    assert!(ours <= mix, "{ours} vs {mix}");
}

#[test]
fn without_an_imatrix_the_budget_anchors_on_the_mix_unless_told_free() {
    let dir = scratch("budget-anchor");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let size = mix_size(&dir, &input, None, "Q4_K_M");
    // At the mix's own size our keys do not fit: the file is llama-quantize's, byte for byte.
    let target = size.to_string();
    let out = dir.join("same.gguf");
    let o = run(
        QUANTIZE,
        &["--target-size", &target, s(&input), s(&out), "Q4_K_M"],
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(dir.join("Q4_K_M-mix.gguf")).unwrap()
    );
    let summary = String::from_utf8_lossy(&o.stderr);
    assert!(
        summary.contains("llama-quantize's Q4_K_M mix as it is"),
        "{summary}"
    );
    // (Room for our keys: anchored on the mix, the bytes left are spent.)
    let size = size + 4096;
    let target = size.to_string();
    let key = |extra: &[&str]| -> String {
        let out = dir.join("out.gguf");
        let mut a = vec!["-q", "--target-size", &target];
        a.extend_from_slice(extra);
        a.extend([s(&input), s(&out), "Q4_K_M"]);
        run(QUANTIZE, &a);
        let got = std::fs::metadata(&out).unwrap().len();
        assert!(
            got <= size && got as f64 >= 0.99 * size as f64,
            "{got} vs {size}"
        );
        let f = ggufkit::gguf::GgufFile::open(&out).unwrap();
        f.metadata
            .get_str("ggufkit.quantize.metric")
            .unwrap()
            .to_string()
    };
    assert_eq!(
        key(&[]),
        "estimated KL divergence; anchored on Q4_K_M's mix where it fits"
    );
    assert_eq!(
        key(&["--budget-anchor", "free"]),
        "estimated KL divergence; total error at most Q4_K_M's where the budget allows"
    );
    let bad = Command::new(QUANTIZE)
        .args([
            "--dry-run",
            "--target-size",
            &target,
            "--budget-anchor",
            "x",
            s(&input),
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn bytes_left_unused_are_explained_in_the_summary() {
    // One candidate type at 8 bits per weight: every budgeted tensor is Q4_K, and no larger
    // type exists to spend the rest on.
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let args = [
        "--dry-run",
        "--target-bpw",
        "8",
        "--budget-types",
        "q4_k",
        s(&input),
    ];
    let text = String::from_utf8_lossy(&run(QUANTIZE, &args).stdout).to_string();
    let line = text.lines().find(|l| l.starts_with("budget ")).unwrap();
    assert!(
        line.contains("bytes unused: no tensor's next larger type fits in them"),
        "{line}"
    );
    let mut a = vec!["--json"];
    a.extend(args);
    let j = json(&run(QUANTIZE, &a));
    assert!(
        j["budget"]["slack"]["unused"].as_u64().unwrap() > 0,
        "{}",
        j["budget"]
    );
    // A budget the choice uses says nothing of the kind.
    let j = json(&run(
        QUANTIZE,
        &["--dry-run", "--json", "--target-bpw", "4.5", s(&input)],
    ));
    assert!(j["budget"]["slack"].is_null(), "{}", j["budget"]);
}
