//! `gguf-quantize --prune-layers`: blocks are dropped and renumbered as llama-quantize does,
//! `{arch}.block_count` follows, and the kept tensors are quantized exactly as without
//! pruning (checked with `--pure`, where the mixture rules cannot depend on the layer count).

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::Path;
use std::process::{Command, Output};

use ggufkit::gguf::{GgufFile, Value};
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

fn quantize(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(["--quiet", "--force"])
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run gguf-quantize")
}

fn names(f: &GgufFile) -> Vec<String> {
    f.tensors.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn pruned_blocks_are_dropped_and_the_rest_renumbered() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let input = input.to_str().unwrap();
    let dir = scratch("q-prune");
    let full = dir.join("full.gguf");
    let o = quantize(&["--pure", input, full.to_str().unwrap(), "Q8_0"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let full = GgufFile::open(&full).unwrap();

    for (prune, kept_old, gone) in [("0", "blk.1.", "blk.0."), ("1,1", "blk.0.", "blk.1.")] {
        let out = dir.join(format!("prune-{prune}.gguf"));
        let o = quantize(
            &[
                "--pure",
                "--prune-layers",
                prune,
                input,
                out.to_str().unwrap(),
                "Q8_0",
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let pruned = GgufFile::open(&out).unwrap();
        // One block is left, numbered 0, holding the data of the kept block.
        let expected: Vec<String> = names(&full)
            .into_iter()
            .filter(|n| !n.starts_with(gone))
            .map(|n| n.replace(kept_old, "blk.0."))
            .collect();
        assert_eq!(names(&pruned), expected, "--prune-layers {prune}");
        for t in &pruned.tensors {
            let old = t.name.replace("blk.0.", kept_old);
            let src = full.tensor(&old).unwrap();
            assert_eq!(t.ty, src.ty, "{}", t.name);
            assert_eq!(
                pruned.tensor_data(t),
                full.tensor_data(src),
                "{} differs from {old}",
                t.name
            );
        }
        // block_count is rewritten, and (removed and re-added) is the last key.
        let (last_key, last) = pruned.metadata.iter().last().unwrap();
        assert_eq!(last_key, "llama.block_count");
        assert_eq!(last, &Value::U32(1));
        assert_eq!(
            pruned.metadata.iter().count(),
            full.metadata.iter().count(),
            "no key added or lost"
        );
    }
}

#[test]
fn pruning_nothing_that_exists_keeps_every_block() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let dir = scratch("q-prune-none");
    let out = dir.join("out.gguf");
    let o = quantize(
        &[
            "--prune-layers",
            "7",
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            "Q8_0",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = GgufFile::open(&out).unwrap();
    assert_eq!(f.tensors.len(), 21);
    assert_eq!(f.metadata.get("llama.block_count"), Some(&Value::U32(2)));
}

#[test]
fn bad_layer_lists_are_usage_errors() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let dir = scratch("q-prune-bad");
    for bad in ["-1", "a", "1,,2"] {
        let out = dir.join("out.gguf");
        let o = quantize(
            &[
                "--prune-layers",
                bad,
                input.to_str().unwrap(),
                out.to_str().unwrap(),
                "Q8_0",
            ],
            &dir,
        );
        assert_eq!(o.status.code(), Some(2), "--prune-layers {bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("invalid layer id"), "{err}");
        assert!(!out.exists());
    }
}
