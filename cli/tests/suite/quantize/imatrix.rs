//! Importance matrices: both formats load to the same values llama-quantize uses, and bad
//! files or mismatched entries give clear errors.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::process::Command;

use ggufkit::quantize::{Imatrix, ImatrixProblem};
use support::*;

#[test]
fn gguf_and_dat_imatrices_agree() {
    let g = Imatrix::load(&testdata("golden/llama-spm/files/imatrix.gguf")).unwrap();
    let d = Imatrix::load(&testdata("golden/llama-spm/files/imatrix.dat")).unwrap();
    assert_eq!(g.entries.len(), 14);
    assert_eq!(g.datasets, ["calibration.txt"]);
    assert_eq!(g.chunk_count, 4);
    assert_eq!(d.chunk_count, 1, "the converted .dat records one chunk");
    assert_eq!(
        g.entries.keys().collect::<Vec<_>>(),
        d.entries.keys().collect::<Vec<_>>()
    );
    for (k, a) in &g.entries {
        let b = &d.entries[k];
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= 1e-6 * x.abs().max(1e-30),
                "{k}: {x} vs {y}"
            );
        }
    }
}

#[test]
fn bad_imatrix_files_give_clear_errors() {
    let dat = std::fs::read(testdata("golden/llama-spm/files/imatrix.dat")).unwrap();
    for cut in [2, 4, 10, 100, dat.len() / 2] {
        let e = Imatrix::parse(dat[..cut].to_vec()).unwrap_err();
        assert!(
            matches!(
                e,
                ImatrixProblem::Truncated { .. } | ImatrixProblem::NoEntries
            ),
            "cut {cut}: {e}"
        );
    }
    let mut nan = dat.clone();
    // First entry: n_entries(4) len(4) name ncall(4) nval(4) values…; poison the first value.
    let name_len = i32::from_le_bytes(nan[4..8].try_into().unwrap()) as usize;
    let v0 = 8 + name_len + 8;
    nan[v0..v0 + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let e = Imatrix::parse(nan).unwrap_err();
    assert!(matches!(e, ImatrixProblem::NonFinite { .. }), "{e}");
    let e = Imatrix::parse(vec![0, 0, 0, 0]).unwrap_err();
    assert!(matches!(e, ImatrixProblem::NoEntries), "{e}");
    let e = Imatrix::parse(std::fs::read(conv::golden_gguf("qwen2", "convert-f32")).unwrap())
        .unwrap_err();
    assert!(matches!(e, ImatrixProblem::MissingMetadata), "{e}");
    let mut g = std::fs::read(testdata("golden/llama-spm/files/imatrix.gguf")).unwrap();
    g.truncate(g.len() - 64);
    assert!(Imatrix::parse(g).is_err());
}

#[test]
fn imatrix_for_another_model_is_refused_by_name_and_size() {
    // The llama-spm imatrix does not fit qwen2 (other widths): llama-quantize throws on the
    // first tensor with a size mismatch; we refuse before writing anything.
    let dir = scratch("imatrix-mismatch");
    std::fs::copy(
        testdata("golden/llama-spm/files/imatrix.gguf"),
        dir.join("imatrix.gguf"),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-quantize"))
        .args(["--imatrix", "imatrix.gguf"])
        .arg(conv::golden_gguf("qwen2", "convert-f32"))
        .arg(dir.join("out.gguf"))
        .arg("Q4_K_M")
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("imatrix size") && err.contains("blk.0."),
        "{err}"
    );
    assert!(!dir.join("out.gguf").exists());
}
