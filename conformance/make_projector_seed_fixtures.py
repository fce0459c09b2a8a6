#!/usr/bin/env python3
"""Second-seed fixtures of the vision- and audio-language fixtures, converted by the reference.

For every fixture NAME that make_mmproj_fixtures.py builds with transformers (not the
hand-written InternVL and Ultravox checkpoints) this script

1. builds the model as make_mmproj_fixtures.py does, with seed 29 and every FFN width of the
   config and of each sub-config (`text_config`, `vision_config`, `audio_config`) that is a
   multiple of 8 increased by 4 (make_seed_fixtures.py's rule); sizes the class or the
   reference refuses are left as they were (the fixture then differs by its seed);
2. adds the fixture's tokenizer files and takes the base fixture's vocabulary-sized tensors
   (`from_base`: embeddings, LM heads), which share_tensors.py stores once;
3. runs llama.cpp's convert_hf_to_gguf.py for the text half and for `--mmproj`, both f32, in a
   directory named NAME-s2 (general.name comes from it), with make_mmproj_fixtures.py's
   pre-tokenizer fallback where it applies one;
4. stores the checkpoint as testdata/hf/NAME-s2/ (tokenizer files by reference to the base
   fixture's) and records in testdata/golden/projector-seeds.json the size changes and the
   sha256 of each output (or the reference's error). Sizes count as refused when an output the
   base fixture's golden has (status.json) fails.

converters/tests/suite/convert/mmproj_golden.rs converts each and compares.

Usage (the reference's venv; then conformance/share_tensors.py):
    GGUFKIT_SHARED=<shared dir> make_projector_seed_fixtures.py --llama-cpp DIR [--only NAME ...]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_composite_variants as cv  # noqa: E402
import golden_pack  # noqa: E402
import make_fixtures as mf  # noqa: E402
import make_mmproj_fixtures as mm  # noqa: E402
import make_seed_fixtures as ms  # noqa: E402

GOLDEN = mf.TESTDATA / "golden" / "projector-seeds.json"
SUB_CONFIGS = ("text_config", "vision_config", "audio_config")


def odd_sizes(kw: dict) -> dict[str, dict[str, int]]:
    """The size changes per config level ("" for the top level)."""
    out = {}
    for level in ("", *SUB_CONFIGS):
        cfg = kw if level == "" else kw.get(level)
        if isinstance(cfg, dict):
            changes = {k: v + 4 for k, v in cfg.items() if k in ms.WIDTHS
                       and isinstance(v, int) and not isinstance(v, bool) and v % 8 == 0}
            if changes:
                out[level] = changes
    return out


def with_sizes(kw: dict, sizes: dict[str, dict[str, int]]) -> dict:
    kw = json.loads(json.dumps(kw))
    for level, changes in sizes.items():
        (kw if level == "" else kw[level]).update(changes)
    return kw


# A dimension this large is a vocabulary's (the fixtures' own widths are below 1024).
VOCAB_SIZED = 1 << 14


def base_vocab_tensors(name: str, model_dir: Path, work: Path) -> list[str]:
    """Replaces every tensor with a vocabulary-sized dimension (token embeddings, LM heads)
    by the base fixture's tensor of the same name, shape and dtype, which share_tensors.py
    then stores once; returns the names."""
    from safetensors.torch import load_file, save_file
    from fixture_io import materialize
    base_dir = materialize(mf.TESTDATA / "hf" / name, work / "base")
    base = {}
    for st in sorted(base_dir.glob("*.safetensors")):
        base.update(load_file(str(st)))
    copied = []
    for st in sorted(model_dir.glob("*.safetensors")):
        tensors = load_file(str(st))
        for k, v in tensors.items():
            b = base.get(k)
            if max(v.shape, default=0) >= VOCAB_SIZED and b is not None \
                    and b.shape == v.shape and b.dtype == v.dtype:
                tensors[k] = b
                copied.append(k)
        save_file(tensors, str(st), metadata={"format": "pt"})
    return sorted(copied)


def attempt(name: str, sizes: dict, llama: Path, work: Path) -> dict | None:
    """Builds NAME-s2 with `sizes` and converts it; None when transformers or the reference
    refuses the sizes."""
    entry = mm.FIXTURES[name]
    if work.exists():
        shutil.rmtree(work)
    model_dir = work / (name + ms.SUFFIX)
    model_dir.mkdir(parents=True)
    mm.FIXTURES[name] = (entry[0], entry[1], with_sizes(entry[2], sizes), *entry[3:])
    try:
        mm.build(name, model_dir, ms.SEED)
    except Exception as e:
        print(f"{name}: sizes {sizes} refused by transformers ({e})", file=sys.stderr)
        return None
    finally:
        mm.FIXTURES[name] = entry
    mm.add_tokenizer(name, model_dir)
    record = {"seed": ms.SEED, "sizes": sizes,
              "from_base": base_vocab_tensors(name, model_dir, work)}
    for key, mmproj in (("text-f32", False), ("mmproj-f32", True)):
        # convert() applies the pre-tokenizer fallback by the directory's name: the base's.
        with mm.pre_fallback(llama, mm.PRE_FALLBACK.get(name)):
            record[key] = cv.convert(llama, model_dir, mmproj, work)
    status = json.loads((mf.TESTDATA / "golden" / name / "status.json").read_text())
    lost = [key for key, base in (("text-f32", "convert-f32"), ("mmproj-f32", "mmproj-f32"))
            if status.get(base, {}).get("ok") and not record[key]["ok"]]
    if sizes and lost:
        print(f"{name}: sizes {sizes} refused by the reference ({lost})", file=sys.stderr)
        return None
    ms.store(name, model_dir)
    return record


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ggufkit-projector-seeds"))
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    record = json.loads(GOLDEN.read_text()) if GOLDEN.is_file() else {}
    names = [n for n in mm.FIXTURES if n not in mm.HAND_BUILT]
    for name in a.only or names:
        print(f"== {name}", file=sys.stderr)
        sizes = odd_sizes(mm.FIXTURES[name][2])
        rec = attempt(name, sizes, a.llama_cpp, a.work / name) if sizes else None
        if rec is None:
            rec = attempt(name, {}, a.llama_cpp, a.work / name)
            assert rec is not None
            if sizes:
                rec["sizes_refused"] = sizes
        record[name + ms.SUFFIX] = rec
        GOLDEN.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
