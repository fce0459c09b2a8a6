#!/usr/bin/env python3
"""Golden data for splitting and merging (`gguf-edit split|merge`, `gguf-quantize --keep-split`).

Runs llama.cpp's `llama-gguf-split` and `llama-quantize` (0c1e570) on llama-spm's f32
conversion and Q4_K_M quantization, one command line per case, in one working directory
(later cases read earlier cases' shards), and writes `testdata/golden/split/cases.json`:
for every case the tool, its arguments (`{f32}` and `{q4km}` stand for the inputs; every other
path is relative to the working directory), what it printed on stdout when that matters
(`--dry-run`), and the size and sha256 of every file it wrote, plus a manifest of each file
(`testdata/golden/split/<case>.<n>.json`, made with `gguf-inspect manifest`) for readable
diffs. These complement llama-spm's `split-*` / `merge` golden cases.

The inputs are made with our own gguf-convert / gguf-quantize and must equal llama.cpp's
(checked against testdata/golden/llama-spm/{convert-f32,quant-Q4_K_M}.json), so the
repository stores no GGUF file.

    python3 conformance/make_split_golden.py --llama-bin <llama.cpp>/build/bin [--bin target/release]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import golden_pack  # noqa: E402
from fixture_io import sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT_DIR = TESTDATA / "golden" / "split"

# name -> (tool, args, record stdout). Outputs are found by listing out/ before and after.
CASES = [
    ("split-size-1M", "llama-gguf-split",
     ["--split", "--split-max-size", "1M", "{q4km}", "out/size"], False),
    ("split-no-tensor-first", "llama-gguf-split",
     ["--split-max-tensors", "8", "--no-tensor-first-split", "{q4km}", "out/nofirst"], False),
    ("split-default-one-shard", "llama-gguf-split", ["{f32}", "out/one"], False),
    ("split-dry-run", "llama-gguf-split",
     ["--dry-run", "--split-max-size", "2M", "{f32}", "out/dry"], True),
    ("merge-no-tensor-first", "llama-gguf-split",
     ["--merge", "out/nofirst-00001-of-00004.gguf", "out/merged-nofirst.gguf"], False),
    ("split-f32-10", "llama-gguf-split",
     ["--split", "--split-max-tensors", "10", "{f32}", "out/f32"], False),
    ("quant-keep-split", "llama-quantize",
     ["--keep-split", "out/f32-00001-of-00003.gguf", "out/keep.gguf", "Q4_K_M"], False),
    ("quant-split-input", "llama-quantize",
     ["out/f32-00001-of-00003.gguf", "out/merged-q.gguf", "Q4_K_M"], False),
    ("split-f32-nofirst", "llama-gguf-split",
     ["--split-max-tensors", "10", "--no-tensor-first-split", "{f32}", "out/nf32"], False),
    ("quant-keep-split-no-tensor-first", "llama-quantize",
     ["--keep-split", "out/nf32-00001-of-00004.gguf", "out/keepnf.gguf", "Q8_0"], False),
]


def golden_sha(variant: str) -> str:
    m = json.loads((TESTDATA / "golden" / "llama-spm" / f"{variant}.json").read_text())
    return m["sha256"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-bin", required=True, type=Path, help="llama.cpp's build/bin")
    ap.add_argument("--bin", default=ROOT / "target" / "release", type=Path)
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "out").mkdir()
        # The fixture directory's name makes general.name: convert it where it is.
        f32 = work / "llama-spm-f32.gguf"
        subprocess.run([str(a.bin / "gguf-convert"), str(TESTDATA / "hf" / "llama-spm"), str(f32),
                        "--outtype", "f32", "--quiet"], check=True)
        q4km = work / "llama-spm-Q4_K_M.gguf"
        subprocess.run([str(a.bin / "gguf-quantize"), "--quiet", str(f32), str(q4km), "Q4_K_M"],
                       check=True)
        for path, variant in [(f32, "convert-f32"), (q4km, "quant-Q4_K_M")]:
            if sha256(path) != golden_sha(variant):
                sys.exit(f"{path.name} differs from llama.cpp's {variant}")
        inputs = {"f32": str(f32), "q4km": str(q4km)}
        records = []
        for case, tool, args, want_stdout in CASES:
            before = set((work / "out").iterdir())
            argv = [str(a.llama_bin / tool)] + [x.format(**inputs) if x.startswith("{") else x
                                                for x in args]
            run = subprocess.run(argv, cwd=work, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"{case}: {tool} failed:\n{run.stderr}")
            written = sorted(set((work / "out").iterdir()) - before)
            outputs = []
            for n, p in enumerate(written):
                manifest = subprocess.run([str(a.bin / "gguf-inspect"), "manifest", str(p)],
                                          check=True, capture_output=True, text=True).stdout
                (OUT_DIR / f"{case}.{n}.json").write_text(manifest, encoding="utf-8")
                outputs.append({"file": str(p.relative_to(work)), "size": p.stat().st_size,
                                "sha256": sha256(p)})
            record = {"case": case, "tool": tool, "args": args, "outputs": outputs}
            if want_stdout:
                record["stdout"] = run.stdout
            records.append(record)
            print(f"{case}: {len(outputs)} files")
    (OUT_DIR / "cases.json").write_text(
        json.dumps({"llama_cpp": "0c1e570", "cases": records}, indent=1) + "\n",
        encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
