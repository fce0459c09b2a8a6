#!/usr/bin/env python3
"""Second-seed fixtures: every make_fixtures.py family again, with another seed and sizes off
the multiples of 8, converted by the reference.

For every fixture NAME of make_fixtures.py's table this script

1. builds the model exactly as make_fixtures.py does, but with seed 29 and, in the config,
   every intermediate size and SSM state size that is a multiple of 8 increased by 4 (so the
   FFN and state dimensions are not multiples of 8 or 32); a size the class refuses that way
   is left as it was (the fixture still differs by its seed); the biggest MoE fixtures also
   get fewer layers and experts (`SMALLER`, recorded as `smaller`);
2. replaces every `A_log` tensor (Mamba, Mamba-2, Jamba, Falcon-H1, Granite-hybrid,
   Nemotron-H, Qwen3-Next) by float32 draws of `log(uniform(1, 16))`, the range the HF
   classes initialise and trained checkpoints keep, so the reference's `-exp(A_log)` runs
   torch's float32 exp on values no bfloat16 grid holds;
3. copies the base fixture's tensors with a vocabulary-sized dimension of 64 KiB or more
   (embeddings, LM heads: most of a tiny model's bytes), which share_tensors.py then stores
   once, so the second seed costs only the model's body;
4. runs llama.cpp's convert_hf_to_gguf.py for --outtype f32 and bf16;
5. writes the checkpoint to testdata/hf/NAME-s2/ (tokenizer files by reference, as the base
   fixture has them) and testdata/golden/seeds/NAME-s2.json: the config changes, the f32
   manifest and the bf16 file's size and sha256 (or the reference's error).

converters/tests/suite/convert/seed_golden.rs converts each and compares whole files.

Usage (torch's default MKL dispatch on an AVX-512 x86-64 CPU, as the project's goldens, so
without MKL_CBWR; then conformance/share_tensors.py):
    GGUFKIT_SHARED=<shared dir> make_seed_fixtures.py --llama-cpp DIR [--only NAME ...]

The hand-made fixtures of FROM_CHECKPOINT (not in make_fixtures.py's table) are rebuilt the
same way from their own config.json (its class, model type and keys; float32 ones stay float32
so that their vocabulary-sized tensors are shared, float16 ones come out bfloat16) with their
own tokenizer files.

With --golden-only the committed testdata/hf/NAME-s2 fixtures are converted again and only
the reference's outcomes in their records are replaced (the weights stay as they are).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_pack  # noqa: E402
import make_fixtures as mf  # noqa: E402
from fixture_io import materialize  # noqa: E402

if os.environ.get("GGUFKIT_SHARED"):
    mf.SHARED = Path(os.environ["GGUFKIT_SHARED"])

SEED = 29
SUFFIX = "-s2"
# Config keys of FFN widths and SSM state sizes.
WIDTHS = ("intermediate_size", "intermediate_size_mlp", "moe_intermediate_size",
          "moe_shared_expert_intermediate_size", "shared_expert_intermediate_size",
          "shared_intermediate_size", "ssm_state_size", "state_size", "mamba_d_state")


def odd_sizes(kw: dict) -> dict[str, int]:
    """The size changes for config `kw` (its text_config for a composite one)."""
    text = kw.get("text_config", kw)
    return {k: v + 4 for k, v in text.items()
            if k in WIDTHS and isinstance(v, int) and not isinstance(v, bool) and v % 8 == 0}


def realistic_a_log(model_dir: Path, seed: int) -> list[str]:
    """Replaces the `A_log` tensors by float32 `log(uniform(1, 16))`; returns their names."""
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    rng = np.random.default_rng(seed)
    changed = []
    for st in sorted(model_dir.glob("*.safetensors")):
        tensors = load_file(str(st))
        names = sorted(k for k in tensors if k.endswith("A_log"))
        if not names:
            continue
        for k in names:
            shape = tuple(tensors[k].shape)
            v = np.log(rng.uniform(1.0, 16.0, size=shape)).astype(np.float32)
            tensors[k] = torch.from_numpy(v)
            changed.append(k)
        save_file(tensors, str(st), metadata={"format": "pt"})
    return changed


def base_vocab_tensors(name: str, model_dir: Path, work: Path) -> list[str]:
    """Copies from the base fixture every tensor with a vocabulary-sized dimension (token
    embeddings, LM heads) whose name, shape and dtype match: the body of the model is
    redrawn, the vocabulary-sized bytes stay those of the base fixture, which
    share_tensors.py then stores once. Returns the copied names."""
    from safetensors.torch import load_file, save_file
    from fixture_io import materialize
    kw, tok = mf.FIXTURES[name][2], mf.FIXTURES[name][3]
    # as build_model fills it in
    vocab = kw.get("text_config", kw).get("vocab_size",
                                          mf.SPM_VOCAB if tok == "spm" else mf.BPE_VOCAB)
    base_dir = materialize(mf.TESTDATA / "hf" / name, work / "base")
    base = {}
    for st in sorted(base_dir.glob("*.safetensors")):
        base.update(load_file(str(st)))
    copied = []
    for st in sorted(model_dir.glob("*.safetensors")):
        tensors = load_file(str(st))
        changed = False
        for k, v in tensors.items():
            b = base.get(k)
            big = vocab is not None and vocab in v.shape
            if b is not None and big and b.shape == v.shape and b.dtype == v.dtype \
                    and v.numel() * v.element_size() >= 64 * 1024:
                tensors[k] = b
                copied.append(k)
                changed = True
        if changed:
            save_file(tensors, str(st), metadata={"format": "pt"})
    shutil.rmtree(base_dir)
    return sorted(copied)


def store(name: str, model_dir: Path) -> None:
    """testdata/hf/NAME-s2: the checkpoint and config copied, tokenizer files referenced as
    the base fixture references them (same relative paths, one directory level)."""
    base = mf.TESTDATA / "hf" / name
    dest = mf.TESTDATA / "hf" / (name + SUFFIX)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shared = {}
    sf = base / "shared-files.txt"
    if sf.is_file():
        for line in sf.read_text().splitlines():
            if " = " in line and "|" not in line:
                f, rel = line.split(" = ", 1)
                shared[f] = rel
    lines = []
    for f in sorted(model_dir.iterdir()):
        rel = shared.get(f.name)
        if rel is not None and (base / rel).is_file() and mf.sha256(base / rel) == mf.sha256(f):
            lines.append(f"{f.name} = {rel}")
        elif rel is None and (base / f.name).is_file() and f.suffix != ".safetensors" \
                and f.name != "config.json" and mf.sha256(base / f.name) == mf.sha256(f) \
                and f.stat().st_size > 4096:
            lines.append(f"{f.name} = ../{name}/{f.name}")
        elif f.is_dir():
            shutil.copytree(f, dest / f.name)
        else:
            shutil.copyfile(f, dest / f.name)
    (dest / "shared-files.txt").write_text("\n".join(lines) + ("\n" if lines else ""))


# Hand-made fixtures (from the shared fixtures, not make_fixtures.py's table) reseeded from
# their own config.json: one per family that has no generated fixture.
FROM_CHECKPOINT = ("bert", "gemma3", "gpt2", "llama-spm", "mixtral", "phi3", "qwen2", "qwen3",
                   "qwen3moe")
# The tokenizer kind FROM_CHECKPOINT fixtures are registered with: their files are copied
# from the base fixture instead of make_fixtures.py's tokenizer sources.
OWN_TOKENIZER = "own"
# Files of a base fixture that are not its tokenizer's.
NOT_TOKENIZER = ("config.json", "model.safetensors.index.json", "shared-files.txt")


def register_from_checkpoint(name: str) -> None:
    """Adds fixture `name` to make_fixtures.py's table from its committed config.json."""
    import transformers
    cfg = json.loads((mf.TESTDATA / "hf" / name / "config.json").read_text())
    drop = {"architectures", "model_type", "transformers_version", "torch_dtype", "dtype",
            "_name_or_path"}
    kw = {k: v for k, v in cfg.items() if k not in drop}
    tie = kw.pop("tie_word_embeddings", None)
    if tie is None:
        tie = transformers.AutoConfig.for_model(cfg["model_type"]).tie_word_embeddings
    mf.FIXTURES[name] = (cfg["architectures"][0], cfg["model_type"], kw, OWN_TOKENIZER, tie)


def copy_own_tokenizer(name: str, model_dir: Path, work: Path) -> None:
    """Copies the base fixture's tokenizer (and other non-weight) files and directories (a
    sentence-transformers `1_Pooling/`) into `model_dir`."""
    base_dir = materialize(mf.TESTDATA / "hf" / name, work / "base-files")
    for f in sorted(base_dir.iterdir()):
        if (model_dir / f.name).exists() or f.name in NOT_TOKENIZER:
            continue
        if f.is_dir():
            shutil.copytree(f, model_dir / f.name)
        elif f.suffix != ".safetensors":
            shutil.copyfile(f, model_dir / f.name)


def keep_base_dtype(name: str, model_dir: Path) -> None:
    """Stores a FROM_CHECKPOINT fixture's tensors as float32 when its base fixture's are (the
    build makes bfloat16), so that its vocabulary-sized tensors can be the base's."""
    from safetensors.torch import load_file, save_file
    import torch
    base_cfg = json.loads((mf.TESTDATA / "hf" / name / "config.json").read_text())
    if base_cfg.get("torch_dtype", base_cfg.get("dtype")) != "float32":
        return
    for st in sorted(model_dir.glob("*.safetensors")):
        tensors = {k: v.to(torch.float32) for k, v in load_file(str(st)).items()}
        save_file(tensors, str(st), metadata={"format": "pt"})
    cfg_path = model_dir / "config.json"
    cfg = json.loads(cfg_path.read_text())
    for key in ("torch_dtype", "dtype"):
        if key in cfg:
            cfg[key] = "float32"
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


# GPT-2's FFN width is `n_inner` (None: 4 · n_embd), which the generic rule does not see.
GPT2_INNER = {"n_inner": 4 * 32 + 4}

# Families whose sizes are tied together (the reference asserts Mamba's d_inner = 2 d_model):
# the changes to make instead of the generic ones.
SIZE_OVERRIDES = {
    "mamba": {"hidden_size": 132, "intermediate_size": 264, "state_size": 20},
    "gpt2": GPT2_INNER,
    # DeepSeek V4's FFN width is the MXFP4 experts' packed dimension (whole 32-value blocks)
    # and its hidden size the borrowed embedding's: its q / output / indexer ranks and head
    # width are made odd instead.
    "deepseek4": {"q_lora_rank": 28, "o_lora_rank": 20, "index_head_dim": 20, "head_dim": 44},
    # Text halves whose weights are another fixture's (BORROWED, fixed shapes): the second
    # seed changes the values only.
    "hunyuanvl-text": {},
    "minicpmv46-text": {},
}


# The biggest MoE fixtures, made smaller for their second seed (testdata's size budget): fewer
# layers and experts, every kind of layer the base fixture has still present once (Ernie 4.5
# MoE: a dense layer 0, then MoE layers from moe_layer_start_index to moe_layer_end_index).
SMALLER = {
    "ernie4_5moe": {"num_hidden_layers": 2, "moe_layer_end_index": 1, "moe_num_experts": 3},
    "phimoe": {"num_local_experts": 3},
    # Hand-made fixtures of width 128-256: one layer.
    "llama-spm": {"num_hidden_layers": 1},
    "mixtral": {"num_hidden_layers": 1},
}


def attempt(name: str, sizes: dict, llama: Path, work: Path) -> dict | None:
    """Builds NAME with `sizes` (and its SMALLER changes) and converts it; None when the
    class or the reference refuses the sizes (not the fixture)."""
    cls_name, model_type, kw, tok, tie = mf.FIXTURES[name]
    if work.exists():
        shutil.rmtree(work)
    model_dir = work / (name + SUFFIX)  # the directory name is general.name
    model_dir.mkdir(parents=True)
    record: dict = {"fixture": name, "seed": SEED, "sizes": sizes}
    smaller = SMALLER.get(name, {})
    if smaller:
        record["smaller"] = smaller
    kw2 = json.loads(json.dumps(kw))
    (kw2.get("text_config", kw2)).update({**sizes, **smaller})
    mf.FIXTURES[name] = (cls_name, model_type, kw2, tok, tie)
    try:
        mf.build_model(name, model_dir, SEED)
    except Exception as e:
        print(f"{name}: sizes {sizes} refused by transformers ({e})", file=sys.stderr)
        return None
    finally:
        mf.FIXTURES[name] = (cls_name, model_type, kw, tok, tie)
    if name in FROM_CHECKPOINT:
        keep_base_dtype(name, model_dir)
    record["from_base"] = base_vocab_tensors(name, model_dir, work)
    record["a_log_f32"] = realistic_a_log(model_dir, SEED + 1)
    if tok == OWN_TOKENIZER:
        copy_own_tokenizer(name, model_dir, work)
    else:
        mf.add_tokenizer(tok, model_dir)
    if name in mf.EXTRA_FILES:
        mf.EXTRA_FILES[name](model_dir)
    convert_record(name, model_dir, llama, work, record)
    if sizes and not all(record[t]["ok"] for t in ("f32", "bf16")):
        print(f"{name}: sizes {sizes} refused by the reference", file=sys.stderr)
        return None
    store(name, model_dir)
    return record


def convert_record(name: str, model_dir: Path, llama: Path, work: Path, record: dict) -> None:
    """Converts `model_dir` for f32 and bf16 and stores the outcomes in `record`."""
    for t in ("f32", "bf16"):
        out = work / f"{name}{SUFFIX}-{t}.gguf"
        rc, err = mf.convert_in_process(llama, [str(model_dir), "--outtype", t,
                                                "--outfile", str(out)], work)
        if rc != 0:
            record[t] = {"ok": False, "error": (err.strip().splitlines() or [""])[-1][-300:]}
            continue
        entry = {"ok": True, "size": out.stat().st_size, "sha256": mf.sha256(out)}
        if t == "f32":
            m = work / "f32.json"
            mf.manifest(llama, out, m)
            entry["manifest"] = json.loads(m.read_text())
        record[t] = entry
        out.unlink()


def remake_golden(name: str, llama: Path, work: Path, golden: Path) -> None:
    """Converts the committed testdata/hf/NAME-s2 again (its weights stay as they are) and
    replaces the reference's outcomes in its record."""
    path = golden / f"{name}{SUFFIX}.json"
    record = json.loads(path.read_text())
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    model_dir = materialize(mf.TESTDATA / "hf" / (name + SUFFIX), work / (name + SUFFIX))
    convert_record(name, model_dir, llama, work, record)
    path.write_text(json.dumps(record, indent=1) + "\n")


def run(name: str, llama: Path, work_root: Path) -> dict:
    kw = mf.FIXTURES[name][2]
    sizes = SIZE_OVERRIDES.get(name, odd_sizes(kw))
    rec = attempt(name, sizes, llama, work_root / name) if sizes else None
    if rec is None:
        rec = attempt(name, {}, llama, work_root / name)
        assert rec is not None
        if sizes:
            rec["sizes_refused"] = sizes
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ggufkit-seed-fixtures"))
    ap.add_argument("--golden-only", action="store_true",
                    help="remake only the reference's outcomes, from the committed fixtures")
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    golden = mf.TESTDATA / "golden" / "seeds"
    golden.mkdir(parents=True, exist_ok=True)
    for name in FROM_CHECKPOINT:
        register_from_checkpoint(name)
    for name in a.only or list(mf.FIXTURES):
        if name not in FROM_CHECKPOINT and not mf._transformers_ok(name):
            continue
        print(f"== {name}", file=sys.stderr)
        if a.golden_only:
            remake_golden(name, a.llama_cpp, a.work / name, golden)
            continue
        try:
            rec = run(name, a.llama_cpp, a.work)
        except Exception:
            traceback.print_exc()
            continue
        (golden / f"{name}{SUFFIX}.json").write_text(json.dumps(rec, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
