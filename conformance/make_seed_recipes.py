#!/usr/bin/env python3
"""Second-seed variants stored as recipes: no weights in testdata, only what rebuilds them.

make_seed_fixtures.py stores each second-seed checkpoint (its body, some hundreds of KB a
family). This script gives the families it does not cover a second-seed variant that costs a
few KB: for every fixture NAME of make_fixtures.py's table it

1. builds the model as make_seed_fixtures.py does (seed 29, every FFN width and SSM state
   size that is a multiple of 8 increased by 4, or the family's SIZE_OVERRIDES), and keeps
   only its config.json and the names, dtypes and shapes of its tensors;
2. makes the checkpoint the test rebuilds: the base fixture testdata/hf/NAME made whole,
   without its weight files, under the directory name NAME-s2 (general.name comes from it),
   with the new config.json and one model.safetensors holding every tensor, sorted by name,
   with values the recipe determines (`synthetic_values`): for tensor number t (in that
   order) and element i, z = splitmix64(seed * 2^48 + t * 2^32 + i) and the value is the
   signed top byte of z times 2^-9 (exact in float32, float16 and bfloat16); an `A_log`
   tensor is float32 whatever the class stored, its value the float32 with bit pattern
   0x3d4ccccd + (z >> 32) mod 0x02e4a54b (0.05 to 2.77, the range of log(1..16) trained
   checkpoints hold), so `-exp(A_log)` takes torch's float32 exp on values no bfloat16 grid
   holds; an int64 tensor (hash constants) holds z >> 20;
3. runs llama.cpp's convert_hf_to_gguf.py for --outtype f32 and bf16 on it;
4. writes testdata/golden/seed-recipes/NAME-s2.json: the base fixture, the seed, the size
   changes (`sizes_refused` when the class or the reference refused them and the variant
   differs by its seed only), config.json's text, the tensor table and each output's size
   and sha256 (or the reference's error).

The Mistral-format fixtures `mistral-spm`, `mistral-tekken` and `mistral-moe` get recipes the
same way from their params.json (`hidden_dim` off the multiples of 8 where it is one) and
consolidated.safetensors, converted with `--mistral-format` (`format` and `files` in the
record).

The hand-written vision- and audio-language fixtures (`PROJECTORS`: internvl3, ultravox,
gemma3n-vl, gemma3n-vl-hf, meralion2, glmasr, sarashina2-vl; and voxtral, audioflamingo3,
built with transformers) get recipes from their own config and tensors, recording the f32
text half (where the base fixture's golden has one) and `--mmproj` file (`format`
"projector"); their sizes change only where the reference keeps the base fixture's outcomes.

converters/tests/suite/convert/seed_recipes.rs rebuilds each checkpoint and compares.

Usage (the reference's venv, torch's default dispatch on an AVX-512 x86-64 CPU):
    GGUFKIT_SHARED=<shared dir> make_seed_recipes.py --llama-cpp DIR [--only NAME ...]
"""
from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_pack  # noqa: E402
import make_fixtures as mf  # noqa: E402
import make_seed_fixtures as ms  # noqa: E402
from fixture_io import materialize  # noqa: E402

GOLDEN = mf.TESTDATA / "golden" / "seed-recipes"
# Files of a fixture that hold or index its weights: replaced by the recipe's model.safetensors.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
WEIGHT_NAMES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
# A safetensors index: a fixture with one gets a one-shard index beside the recipe's weights.
INDEX = "model.safetensors.index.json"
A_LOG_FIRST = 0x3D4C_CCCD
A_LOG_SPAN = 0x4031_7218 - A_LOG_FIRST
ITEM = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8}
# FFN widths under the names of classes make_seed_fixtures.py does not cover (DistilBERT's
# hidden_dim, JAIS's n_inner, SmallThinker's expert width), besides its own.
EXTRA_WIDTHS = ("hidden_dim", "n_inner", "moe_ffn_hidden_size")
M64 = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E37_79B9_7F4A_7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58_476D_1CE4_E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D0_49BB_1331_11EB)
        return z ^ (z >> np.uint64(31))


def synthetic_values(seed: int, t: int, name: str, dtype: str, n: int) -> bytes:
    """The little-endian bytes of tensor number `t` (see the module doc)."""
    with np.errstate(over="ignore"):
        base = np.uint64((seed << 48) + (t << 32))
        z = splitmix64(base + np.arange(n, dtype=np.uint64))
    if name.endswith("A_log"):
        bits = (np.uint64(A_LOG_FIRST) + (z >> np.uint64(32)) % np.uint64(A_LOG_SPAN))
        return bits.astype("<u4").tobytes()
    if dtype == "I64":
        return (z >> np.uint64(20)).astype("<i8").tobytes()
    v = (z >> np.uint64(56)).astype(np.uint8).view(np.int8).astype(np.float32) * np.float32(2.0 ** -9)
    if dtype == "F32":
        return v.astype("<f4").tobytes()
    if dtype == "F16":
        return v.astype("<f2").tobytes()
    if dtype == "BF16":
        return (v.view(np.uint32) >> np.uint32(16)).astype("<u2").tobytes()
    raise ValueError(f"{name}: dtype {dtype} has no synthetic values")


def tensor_table(model_dir: Path) -> list[list]:
    """[name, dtype, shape] of every tensor of the checkpoint, sorted by name; `A_log`
    tensors as float32."""
    table = []
    for st in sorted(model_dir.glob("*.safetensors")):
        raw = st.read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        for k, v in header.items():
            if k == "__metadata__":
                continue
            dtype = "F32" if k.endswith("A_log") else v["dtype"]
            if dtype not in ITEM:
                raise ValueError(f"{k}: dtype {dtype} cannot be synthesized")
            table.append([k, dtype, list(v["shape"])])
    if not table:
        raise ValueError("no safetensors tensors")
    return sorted(table)


def write_safetensors(path: Path, seed: int, table: list[list]) -> None:
    """One safetensors file of `table`'s tensors in order, values from `synthetic_values`."""
    header, blobs, at = {}, [], 0
    for t, (name, dtype, shape) in enumerate(table):
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        b = synthetic_values(seed, t, name, dtype, n)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


# Value seeds other than make_seed_fixtures.py's for the recipes whose float32 `A_log` drew,
# under that seed, an input where MKL's generic and AVX-512 exp paths disagree: the recipe
# must not depend on the machine it is made on (the goldens follow the AVX-512 path, which
# an AMD machine's MKL does not take). Checked by running the recipe's test under both
# GGUFKIT_TORCH_MKL settings.
VALUE_SEEDS = {"plamo2": 31}


def recipe_input(name: str, config_text: str, table: list[list], work: Path,
                 files: tuple[str, str] = ("config.json", "model.safetensors")) -> Path:
    """The checkpoint the test rebuilds: the base fixture without its weights, the recipe's
    config and weights (`files`: their names), in a directory named NAME-s2."""
    d = materialize(mf.TESTDATA / "hf" / name, work / (name + ms.SUFFIX))
    indexed = (d / INDEX).is_file() and files[1] == "model.safetensors"
    for f in list(d.iterdir()):
        if f.is_file() and (f.suffix in WEIGHT_SUFFIXES or f.name in WEIGHT_NAMES):
            f.unlink()
    (d / files[0]).write_text(config_text)
    write_safetensors(d / files[1], VALUE_SEEDS.get(name, ms.SEED), table)
    if indexed:
        # A class that reads the index itself (MiniMax-Text-01) needs one: every tensor in
        # the one shard. The record says so (`index`), and the test writes the same.
        index = {"metadata": {}, "weight_map": {n: files[1] for n, _, _ in table}}
        (d / INDEX).write_text(json.dumps(index, indent=2) + "\n")
    return d


def convert(name: str, model_dir: Path, llama: Path, work: Path,
            flags: tuple[str, ...] = ()) -> dict:
    out = {}
    for t in ("f32", "bf16"):
        gguf = work / f"{name}-{t}.gguf"
        rc, err = mf.convert_in_process(llama, [str(model_dir), *flags, "--outtype", t,
                                                "--outfile", str(gguf)], work)
        if rc != 0:
            out[t] = {"ok": False, "error": (err.strip().splitlines() or [""])[-1][-300:]}
        else:
            out[t] = {"ok": True, "size": gguf.stat().st_size, "sha256": mf.sha256(gguf)}
            gguf.unlink()
    return out


def derived_from_base(name: str, sizes: dict, work: Path,
                      config_file: str = "config.json") -> tuple[str, list[list]]:
    """config.json and the tensor table of NAME with `sizes`, from the base fixture itself:
    for a fixture this transformers cannot build (a pinned version, remote code). Each
    changed size's old value must be no other dimension of the config; tensor dimensions
    equal to it take the new value."""
    base = materialize(mf.TESTDATA / "hf" / name, work / "base")
    try:
        cfg = json.loads((base / config_file).read_text())
        text = cfg.get("text_config", cfg)
        old = {text[k]: v for k, v in sizes.items()}
        others = {v for k, v in text.items() if isinstance(v, int) and k not in sizes}
        if set(old) & others:
            raise ValueError(f"{name}: sizes {sizes} share a value with another dimension")
        text.update(sizes)
        table = [[n, d, [old.get(x, x) for x in shape]] for n, d, shape in tensor_table(base)]
    finally:
        shutil.rmtree(base)
    return json.dumps(cfg, indent=2, sort_keys=True) + "\n", table


def attempt(name: str, sizes: dict, llama: Path, work: Path) -> dict | None:
    """The recipe of NAME with `sizes`; None when the class or the reference refuses them."""
    cls_name, model_type, kw, tok, tie = mf.FIXTURES[name]
    if work.exists():
        shutil.rmtree(work)
    build = work / "build"
    build.mkdir(parents=True)
    kw2 = json.loads(json.dumps(kw))
    (kw2.get("text_config", kw2)).update(sizes)
    mf.FIXTURES[name] = (cls_name, model_type, kw2, tok, tie)
    try:
        if not mf._transformers_ok(name):
            raise ValueError("built with another transformers")
        mf.build_model(name, build, ms.SEED)
        mf.add_tokenizer(tok, build)
        if name in mf.EXTRA_FILES:
            mf.EXTRA_FILES[name](build)
    except Exception as e:
        # Not buildable here (a pinned transformers, a checkpoint written from other
        # fixtures' files): the base fixture's own config and tensors with the sizes.
        print(f"{name}: not built ({e}); derived from the base fixture", file=sys.stderr)
        try:
            config_text, table = derived_from_base(name, sizes, work)
        except ValueError as e:
            print(e, file=sys.stderr)
            return None
        return finish(name, sizes, config_text, table, llama, work)
    finally:
        mf.FIXTURES[name] = (cls_name, model_type, kw, tok, tie)
    return finish(name, sizes, (build / "config.json").read_text(), tensor_table(build), llama,
                  work)


def finish(name: str, sizes: dict, config_text: str, table: list[list], llama: Path,
           work: Path) -> dict | None:
    """Converts the recipe's checkpoint; its record, or None when the reference refuses the
    sizes."""
    work.mkdir(parents=True, exist_ok=True)
    model_dir = recipe_input(name, config_text, table, work)
    record = {"fixture": name, "seed": VALUE_SEEDS.get(name, ms.SEED), "sizes": sizes,
              "config": config_text, "tensors": table, **convert(name, model_dir, llama, work)}
    if (model_dir / INDEX).is_file():
        record["index"] = True
    shutil.rmtree(work)
    if sizes and not all(record[t]["ok"] for t in ("f32", "bf16")):
        print(f"{name}: sizes {sizes} refused by the reference: {record['f32']}",
              file=sys.stderr)
        return None
    return record


# Mistral-format fixtures (params.json, consolidated.safetensors; the reference's
# --mistral-format): the recipe records `format` and its files' names.
MISTRAL = ("mistral-spm", "mistral-tekken", "mistral-moe")
MISTRAL_FILES = ("params.json", "consolidated.safetensors")


def run_mistral(name: str, llama: Path, work: Path) -> dict:
    """A Mistral-format fixture's recipe: its params.json with `hidden_dim` off the multiples
    of 8 where it is one (else the seed alone differs)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    params = json.loads((mf.TESTDATA / "hf" / name / "params.json").read_text())
    sizes = {k: v + 4 for k, v in params.items() if k == "hidden_dim" and v % 8 == 0}
    for attempt_sizes in ([sizes, {}] if sizes else [{}]):
        config_text, table = derived_from_base(name, attempt_sizes, work, "params.json")
        d = recipe_input(name, config_text, table, work, MISTRAL_FILES)
        record = {"fixture": name, "seed": ms.SEED, "sizes": attempt_sizes,
                  "format": "mistral", "files": list(MISTRAL_FILES), "config": config_text,
                  "tensors": table, **convert(name, d, llama, work, ("--mistral-format",))}
        if record["f32"]["ok"] or not attempt_sizes:
            if sizes and not attempt_sizes:
                record["sizes_refused"] = sizes
            shutil.rmtree(work)
            return record
    raise AssertionError("unreachable")


# Hand-written vision- and audio-language fixtures (make_projector_seed_fixtures.py covers
# the transformers-built ones), and transformers-built or projector-only fixtures added later
# (a recipe costs a few KB where a stored checkpoint costs its weights): the recipe records the
# text half and `--mmproj` (f32).
PROJECTORS = ("internvl3", "ultravox", "gemma3n-vl", "gemma3n-vl-hf", "voxtral",
              "audioflamingo3", "meralion2", "glmasr", "sarashina2-vl", "kimik25-vl", "kimivl",
              "llama4-vision", "lfm2vl", "lightonocr", "granite4v", "youtuvl",
              "hunyuanvl", "paddleocr-vl", "deepseek4-vl", "cogvlm",
              "janus", "minicpmv46", "ling3vl", "exaone45-vl", "minimax-m3-vl", "stepvl",
              "step3p7", "deepseekocr-vl", "deepseekocr2-vl")
PROJECTORS += ("dotsocr-vl",)
PROJECTORS += ("phi4v",)
PROJECTORS += ("nemotron-vl", "nemotron-omni")
PROJECTORS += ("granitespeech", "lfm2audio")
PROJECTORS += ("mimo-vl",)


def convert_projector(name: str, model_dir: Path, llama: Path, work: Path) -> dict:
    """The sha256 of the text half (where the base fixture's golden has one) and of the
    `--mmproj` file, f32, or the reference's error."""
    import make_mmproj_fixtures as mm
    status = json.loads((mf.TESTDATA / "golden" / name / "status.json").read_text())
    out = {}
    for key, base_key, flags in (("text-f32", "convert-f32", ()),
                                 ("mmproj-f32", "mmproj-f32", ("--mmproj",))):
        if base_key not in status:
            continue
        gguf = work / f"{name}-{key}.gguf"
        with mm.pre_fallback(llama, mm.PRE_FALLBACK.get(name)):
            rc, err = mf.convert_in_process(llama, [str(model_dir), *flags, "--outtype", "f32",
                                                    "--outfile", str(gguf)], work)
        if rc != 0 or not gguf.is_file():
            out[key] = {"ok": False, "error": (err.strip().splitlines() or [""])[-1][-300:]}
        else:
            out[key] = {"ok": True, "sha256": mf.sha256(gguf)}
            gguf.unlink()
    return out


def run_projector(name: str, llama: Path, work: Path) -> dict:
    """A hand-written multimodal fixture's recipe: its text config's FFN widths off the
    multiples of 8 where the reference converts that (else the seed alone differs)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    from fixture_io import fixture_file
    cfg = json.loads(fixture_file(mf.TESTDATA / "hf" / name, "config.json").read_text())
    sizes = ms.odd_sizes(cfg)
    for attempt_sizes in ([sizes, {}] if sizes else [{}]):
        try:
            config_text, table = derived_from_base(name, attempt_sizes, work)
        except ValueError as e:
            print(e, file=sys.stderr)
            continue
        d = recipe_input(name, config_text, table, work)
        outputs = convert_projector(name, d, llama, work)
        record = {"fixture": name, "seed": ms.SEED, "sizes": attempt_sizes,
                  "format": "projector", "config": config_text, "tensors": table, **outputs}
        base = json.loads((mf.TESTDATA / "golden" / name / "status.json").read_text())
        kept = all(record[k]["ok"] == base[b]["ok"] for k, b in
                   (("text-f32", "convert-f32"), ("mmproj-f32", "mmproj-f32")) if k in record)
        if kept or not attempt_sizes:
            if sizes and not attempt_sizes:
                record["sizes_refused"] = sizes
            shutil.rmtree(work)
            return record
        shutil.rmtree(work)
        work.mkdir(parents=True)
    raise AssertionError(f"{name}: no recipe")


def odd_sizes(kw: dict) -> dict[str, int]:
    """make_seed_fixtures.py's size changes, over its widths and EXTRA_WIDTHS."""
    text = kw.get("text_config", kw)
    return {**ms.odd_sizes(kw),
            **{k: v + 4 for k, v in text.items() if k in EXTRA_WIDTHS and isinstance(v, int)
               and not isinstance(v, bool) and v % 8 == 0}}


def run(name: str, llama: Path, work: Path) -> dict:
    kw = mf.FIXTURES[name][2]
    sizes = ms.SIZE_OVERRIDES.get(name, odd_sizes(kw))
    rec = attempt(name, sizes, llama, work) if sizes else None
    if rec is None:
        rec = attempt(name, {}, llama, work)
        assert rec is not None
        if sizes:
            rec["sizes_refused"] = sizes
    return rec


def write_record(path: Path, rec: dict) -> None:
    """The record with one tensor a line, so that diffs stay readable."""
    body = {k: v for k, v in rec.items() if k != "tensors"}
    text = json.dumps(body, indent=1)
    rows = ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in rec["tensors"])
    path.write_text(text[:-2] + ',\n "tensors": [\n' + rows + "\n ]\n}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ggufkit-seed-recipes"))
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    GOLDEN.mkdir(parents=True, exist_ok=True)
    stored = {p.name for p in (mf.TESTDATA / "golden" / "seeds").glob("*.json")}
    for name in a.only or [*mf.FIXTURES, *MISTRAL, *PROJECTORS]:
        if not a.only and f"{name}{ms.SUFFIX}.json" in stored:
            continue
        print(f"== {name}", file=sys.stderr)
        try:
            if name in MISTRAL:
                rec = run_mistral(name, a.llama_cpp, a.work / name)
            elif name in PROJECTORS:
                rec = run_projector(name, a.llama_cpp, a.work / name)
            else:
                rec = run(name, a.llama_cpp, a.work / name)
        except Exception:
            traceback.print_exc()
            continue
        write_record(GOLDEN / f"{name}{ms.SUFFIX}.json", rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
