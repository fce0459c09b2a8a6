//! `gguf-convert --batch jobs.toml --shard K/N` runs deterministic slices that together make
//! exactly the outputs of the whole batch; `--plan --json` shows the slices.

use ggufkit_testsupport::golden as support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ggufs(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".gguf"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn shards_partition_the_batch() {
    let dir = scratch("batch-shard");
    let sources = [
        golden_gguf("llama-spm", "convert-f32"),
        golden_gguf("qwen2", "convert-f32"),
        testdata("hf/phi3"),
        testdata("hf/qwen2"),
    ];
    let mut text = String::new();
    for (i, s) in sources.iter().enumerate() {
        text += &format!(
            "[[job]]\nsource = \"{}\"\noutdir = \"out\"\noutputs = [{{ type = \"q8_0\", name = \"job{i}.gguf\" }}]\n",
            s.display(),
        );
    }
    let jobs = dir.join("jobs.toml");
    std::fs::write(&jobs, &text).unwrap();
    let j = jobs.to_str().unwrap();
    // The plan: two slices covering the four jobs once, the largest source alone first.
    let o = run(&["--batch", j, "--plan", "2", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let shards = plan["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 2);
    let mut seen: Vec<u64> = shards
        .iter()
        .flat_map(|s| s["jobs"].as_array().unwrap().iter())
        .map(|j| j["index"].as_u64().unwrap())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, vec![1, 2, 3, 4]);
    // Running both slices makes every output once; each slice makes only its own.
    let out = dir.join("out");
    let mut made = BTreeSet::new();
    for (k, s) in shards.iter().enumerate() {
        let before = ggufs(&out);
        let o = run(&["--batch", j, "--shard", &format!("{}/2", k + 1), "-q"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let new: BTreeSet<String> = ggufs(&out).difference(&before).cloned().collect();
        let want: BTreeSet<String> = s["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| format!("job{}.gguf", j["index"].as_u64().unwrap() - 1))
            .collect();
        assert_eq!(new, want, "shard {}", k + 1);
        made.extend(new);
    }
    assert_eq!(made.len(), 4);
    // Bad shard specs are usage errors.
    for bad in ["0/2", "3/2", "x"] {
        let o = run(&["--batch", j, "--shard", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
}
