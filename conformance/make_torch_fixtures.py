#!/usr/bin/env python3
"""PyTorch-checkpoint fixtures and their golden data: what the reference writes from `.bin` files.

For each source fixture (a safetensors model of testdata/hf), loads its tensors with torch in
the reference's order (shard by shard, names sorted within a shard) and `torch.save`s that
state dict as `testdata/hf/<fixture>-bin/pytorch_model.bin`, or as two shards
`pytorch_model-0000N-of-00002.bin` with `pytorch_model.bin.index.json`. The other files of
the source fixture are not copied: `shared-files.txt` points at them.

Then runs the pinned llama.cpp's `convert_hf_to_gguf.py` for every `--outtype` on
  - the `.bin` fixture, in a scratch directory named like it (`sha256`),
  - the `.bin` fixture in a scratch directory named like the source fixture
    (`renamed_sha256`: the default `general.name` comes from the directory name), and
  - the source safetensors fixture (`safetensors_sha256`),
and writes `testdata/golden/torch/cases.json`. Where `renamed_sha256` equals
`safetensors_sha256` the reference gives the same bytes from both routes.

Also writes `testdata/golden/torch/dtypes.{bin,json}` (see `write_dtypes()`) and the hostile corpus `testdata/hostile-torch/` (see `hostile()`): checkpoints whose
pickle tries to run code (each payload would create a marker file) or whose archive is
malformed. None of these is ever loaded here.

    python3 conformance/make_torch_fixtures.py --llama-cpp <llama.cpp source>

Needs Python with torch, transformers, sentencepiece, protobuf, safetensors and numpy.
"""

import argparse
import hashlib
import io
import json
import os
import pickle
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from fixture_io import materialize, sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "golden" / "torch" / "cases.json"
HOSTILE = TESTDATA / "hostile-torch"

# source fixture -> (number of .bin shards, whether q/k/v are views of one storage per layer)
FIXTURES = {"llama-spm": (1, True), "qwen2": (2, False)}
OUTTYPES = ["f32", "f16", "bf16", "q8_0"]
WEIGHT_SUFFIXES = (".safetensors", ".bin")
# The marker every hostile payload would create (the test checks it never appears).
MARKER = "/tmp/ggufkit-hostile-torch-marker"


def source_files(src: Path) -> dict:
    """Non-weight files of a fixture: name -> path relative to testdata/hf/<src>."""
    files = {}
    for p in sorted(src.iterdir()):
        if p.is_file() and p.name != "shared-files.txt" and not p.name.endswith(WEIGHT_SUFFIXES) \
                and not p.name.endswith(".index.json"):
            files[p.name] = p.name
    shared = src / "shared-files.txt"
    if shared.exists():
        for line in shared.read_text().splitlines():
            if "=" in line:
                name, rel = (x.strip() for x in line.split("=", 1))
                files[name] = rel
    return files


def state_dict(src: Path) -> dict:
    """The source's tensors in the reference's order: parts sorted, names sorted in a part."""
    from safetensors.torch import load_file
    sd = {}
    for part in sorted(p for p in os.listdir(src) if p.startswith("model") and p.endswith(".safetensors")):
        t = load_file(str(src / part))
        for k in sorted(t):
            sd[k] = t[k].contiguous()
    return sd


def fuse_qkv(sd: dict) -> None:
    """Makes each layer's q/k/v projections views of one storage (k and v at a non-zero
    storage offset), as checkpoints saved from fused modules have them; torch.save then
    writes that storage once. The values, names and order do not change."""
    import torch
    for qname in [k for k in sd if k.endswith("self_attn.q_proj.weight")]:
        base = qname[: -len("q_proj.weight")]
        parts = [sd[base + f"{p}_proj.weight"] for p in "qkv"]
        fused = torch.cat([t.flatten() for t in parts])
        at = 0
        for p, t in zip("qkv", parts):
            sd[base + f"{p}_proj.weight"] = fused[at: at + t.numel()].view(t.shape)
            at += t.numel()


def make_fixture(name: str, shards: int, fused: bool) -> Path:
    import torch
    src = TESTDATA / "hf" / name
    dst = TESTDATA / "hf" / f"{name}-bin"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    sd = state_dict(src)
    if fused:
        fuse_qkv(sd)
    if shards == 1:
        torch.save(sd, dst / "pytorch_model.bin")
    else:
        keys = list(sd)
        per = -(-len(keys) // shards)
        weight_map = {}
        total = 0
        for i in range(shards):
            part = {k: sd[k] for k in keys[i * per:(i + 1) * per]}
            fname = f"pytorch_model-{i + 1:05d}-of-{shards:05d}.bin"
            torch.save(part, dst / fname)
            for k, v in part.items():
                weight_map[k] = fname
                total += v.numel() * v.element_size()
        (dst / "pytorch_model.bin.index.json").write_text(
            json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2) + "\n")
    lines = [f"{n} = ../{name}/{rel}" for n, rel in source_files(src).items()]
    (dst / "shared-files.txt").write_text("\n".join(lines) + "\n")
    return dst


def convert(llama_cpp: Path, model: Path, outtype: str, out: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    cmd = [sys.executable, str(llama_cpp / "convert_hf_to_gguf.py"), str(model),
           "--outfile", str(out), "--outtype", outtype]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    digest = sha256(out)
    out.unlink()
    return digest


# ---------------------------------------------------------------------------------------------
# Hostile corpus


class Payload:
    """Pickles as `func(*args)`: what a malicious checkpoint's `__reduce__` does."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def touch_marker_cmd(tag: str) -> str:
    return f"touch {MARKER}-{tag}"


def zip_checkpoint(pkl: bytes, members=None, prefix="archive", byteorder="little") -> bytes:
    """A torch-style archive (stored members) around `pkl`."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        def put(name, data):
            z.writestr(zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0)), data)
        put("data.pkl", pkl)
        put("byteorder", byteorder)
        for name, data in (members or {}).items():
            put(name, data)
        put("version", "3\n")
    return b.getvalue()


def valid_checkpoint() -> bytes:
    import torch
    b = io.BytesIO()
    torch.save({"w": torch.arange(8, dtype=torch.float32).reshape(2, 4)}, b)
    return b.getvalue()


def hostile() -> dict:
    """name -> bytes of each hostile checkpoint (and what it tries, in the name)."""
    import builtins
    import subprocess as sp
    import torch
    cases = {}

    def pk(obj, protocol=2):
        return pickle.dumps(obj, protocol=protocol)

    # Code execution through REDUCE of a forbidden global.
    cases["os-system"] = zip_checkpoint(pk({"w": Payload(os.system, touch_marker_cmd("os-system"))}))
    cases["builtins-eval"] = zip_checkpoint(pk(
        {"w": Payload(builtins.eval, f"__import__('os').system('{touch_marker_cmd('eval')}')")}))
    cases["builtins-exec-proto4"] = zip_checkpoint(pk(
        Payload(builtins.exec, f"import os; os.system('{touch_marker_cmd('exec')}')"), protocol=4))
    cases["subprocess-popen"] = zip_checkpoint(pk(
        {"w": Payload(sp.Popen, ["touch", f"{MARKER}-popen"])}, protocol=3))
    # The payload at the top level, not inside the dict.
    cases["reduce-top-level"] = zip_checkpoint(pk(Payload(os.system, touch_marker_cmd("top"))))
    # A state dict whose tensor rebuild function is replaced by a forbidden one.
    good = valid_checkpoint()
    zin = zipfile.ZipFile(io.BytesIO(good))
    pkl_name = next(n for n in zin.namelist() if n.endswith("data.pkl"))
    pkl = zin.read(pkl_name)
    evil = pkl.replace(b"ctorch._utils\n_rebuild_tensor_v2\n", b"cposix\nsystem\n")
    assert evil != pkl
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for n in zin.namelist():
            z.writestr(zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0)),
                       evil if n == pkl_name else zin.read(n))
    cases["rebuild-swapped-for-system"] = out.getvalue()
    # An allowed global called as something else: a storage class invoked with a command.
    cases["storage-class-reduce"] = zip_checkpoint(
        b"\x80\x02}q\x00X\x01\x00\x00\x00wctorch\nFloatStorage\nX\x05\x00\x00\x00touch\x85R\x73.")
    # Object construction opcodes (NEWOBJ/INST) a class-instantiating payload uses.
    cases["newobj"] = zip_checkpoint(b"\x80\x02ccollections\nOrderedDict\n)\x81.")
    cmd = touch_marker_cmd("inst").encode()
    cases["inst"] = zip_checkpoint(b"(X" + struct.pack("<I", len(cmd)) + cmd + b"ios\nsystem\n.")
    # A dict value that is not a tensor (a forbidden-free but wrong structure).
    cases["value-not-a-tensor"] = zip_checkpoint(pk({"w": 1.5}))
    # Deep nesting: 100k nested tuples, 300 nested marks.
    cases["deep-tuples"] = zip_checkpoint(b"\x80\x02N" + b"\x85" * 100_000 + b".")
    cases["deep-marks"] = zip_checkpoint(b"\x80\x02" + b"(" * 300 + b".")
    # Huge memo index (a vector sized by it would allocate 16 GiB), then a GET of a never-set one.
    cases["huge-memo-index"] = zip_checkpoint(b"\x80\x02}r\xff\xff\xff\xffj\xfe\xff\xff\xff.")
    # A huge string length (4 GiB announced in a tiny file).
    cases["huge-string-length"] = zip_checkpoint(b"\x80\x02X\xff\xff\xff\xff" + b"a" * 16 + b".")
    # A billion-laughs memo (each level doubles by reference): bounded by design.
    laughs = b"\x80\x02N" + b"q\x000h\x00h\x00\x86" * 40 + b"."
    cases["memo-laughs"] = zip_checkpoint(laughs)
    cases["no-stop"] = zip_checkpoint(b"\x80\x02}")
    # Storage references that lie about the archive.
    w = "ctorch._utils\n_rebuild_tensor_v2\n"
    def tensor_pickle(numel: int, size: int, offset: int = 0, key: str = "0") -> bytes:
        # {'w': _rebuild_tensor_v2(storage(key, numel floats), offset, (size,), (1,), False, OrderedDict())}
        return (b"\x80\x02}X\x01\x00\x00\x00w" + w.encode() + b"((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                + b"X" + struct.pack("<I", len(key)) + key.encode() + b"X\x03\x00\x00\x00cpu"
                + b"J" + struct.pack("<i", numel) + b"tQJ" + struct.pack("<i", offset)
                + b"J" + struct.pack("<i", size) + b"\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtRs.")
    cases["tensor-past-storage"] = zip_checkpoint(tensor_pickle(4, 8), {"data/0": b"\0" * 16})
    cases["offset-past-storage"] = zip_checkpoint(tensor_pickle(4, 2, offset=3), {"data/0": b"\0" * 16})
    cases["storage-size-lies"] = zip_checkpoint(tensor_pickle(1 << 30, 4), {"data/0": b"\0" * 16})
    cases["storage-missing"] = zip_checkpoint(tensor_pickle(4, 4, key="9"), {"data/0": b"\0" * 16})
    # Broken archives, from a valid checkpoint.
    cases["truncated-half"] = good[: len(good) // 2]
    cases["truncated-no-eocd"] = good[:-10]
    cases["legacy-format"] = legacy_checkpoint()
    cases["not-a-checkpoint"] = b"this is not a pytorch checkpoint\n"
    cases["member-size-past-end"] = patch_central(good, "data/0", size=1 << 31)
    cases["member-offset-past-end"] = patch_central(good, "data/0", header_offset=len(good) + 100)
    cases["overlapping-members"] = overlapping()
    cases["duplicate-member"] = zip_checkpoint(pk({}), {"data.pkl": pk({})})
    cases["compressed-member"] = compressed(good)
    # Valid checkpoints we do not read: a transposed (non-contiguous) tensor, big-endian data.
    b = io.BytesIO()
    torch.save({"w": torch.zeros(2, 3).t()}, b)
    cases["non-contiguous"] = b.getvalue()
    cases["big-endian"] = zip_checkpoint(pk({}), byteorder="big")
    return cases


DTYPES_BIN = TESTDATA / "golden" / "torch" / "dtypes.bin"


def write_dtypes() -> None:
    """A checkpoint with every dtype and rebuild function we read, and what each tensor must
    be: `dtypes.bin` and `dtypes.json` (name, dtype, shape, sha256 of the bytes)."""
    import torch
    g = torch.Generator().manual_seed(15)
    base = torch.randn(4, 6, generator=g)
    sd = {
        "f32": base,
        "f16": base.half(),
        "bf16": base.bfloat16(),
        "f64": base.double()[1],
        "i64": torch.arange(5),
        "i32": torch.arange(5, dtype=torch.int32),
        "i16": torch.arange(5, dtype=torch.int16),
        "i8": torch.arange(-2, 3, dtype=torch.int8),
        "u8": torch.arange(5, dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "f8_e4m3": base.to(torch.float8_e4m3fn),
        "f8_e5m2": base.to(torch.float8_e5m2),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "param": torch.nn.Parameter(base[2:].clone()),
        "row_view": base[3],
    }
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.float64: "F64", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
             torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
             torch.float8_e4m3fn: "F8_E4M3", torch.float8_e5m2: "F8_E5M2"}
    DTYPES_BIN.parent.mkdir(parents=True, exist_ok=True)
    torch.save(sd, DTYPES_BIN)
    expect = []
    for k, t in sd.items():
        raw = t.detach().reshape(-1).view(torch.uint8).numpy().tobytes()
        expect.append({"name": k, "dtype": names[t.dtype], "shape": list(t.shape),
                       "sha256": hashlib.sha256(raw).hexdigest()})
    DTYPES_BIN.with_suffix(".json").write_text(json.dumps(expect, indent=1) + "\n")


def legacy_checkpoint() -> bytes:
    import torch
    b = io.BytesIO()
    torch.save({"w": torch.zeros(2)}, b, _use_new_zipfile_serialization=False)
    return b.getvalue()


def central_entries(data: bytes):
    """(offset of the central directory entry, name) for each member."""
    eocd = data.rfind(b"PK\x05\x06")
    n, _, cd = struct.unpack_from("<HII", data, eocd + 10)
    at = cd
    for _ in range(n):
        nl, el, cl = struct.unpack_from("<HHH", data, at + 28)
        yield at, data[at + 46: at + 46 + nl].decode()
        at += 46 + nl + el + cl


def patch_central(data: bytes, suffix: str, size=None, header_offset=None) -> bytes:
    b = bytearray(data)
    for at, name in central_entries(data):
        if name.endswith(suffix):
            if size is not None:
                struct.pack_into("<II", b, at + 20, size, size)
            if header_offset is not None:
                struct.pack_into("<I", b, at + 42, header_offset)
    return bytes(b)


def local_header(name: bytes, data: bytes) -> bytes:
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zipfile.crc32(data),
                       len(data), len(data), len(name), 0) + name + data


def central_header(name: bytes, data: bytes, offset: int) -> bytes:
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, zipfile.crc32(data),
                       len(data), len(data), len(name), 0, 0, 0, 0, 0, offset) + name


def overlapping() -> bytes:
    """A member whose local header and data lie inside another member's data: the data of
    `data/0` embeds a complete member `data/1`, which the central directory also lists."""
    pkl = pickle.dumps({}, protocol=2)
    inner = local_header(b"archive/data/1", b"\0" * 8)
    members = [(b"archive/data.pkl", pkl), (b"archive/data/0", inner + b"\0" * 8)]
    out, central, offsets = b"", b"", {}
    for name, data in members:
        offsets[name] = len(out)
        central += central_header(name, data, len(out))
        out += local_header(name, data)
    inner_at = offsets[b"archive/data/0"] + 30 + len(b"archive/data/0")
    central += central_header(b"archive/data/1", b"\0" * 8, inner_at)
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 3, 3, len(central), len(out), 0)
    return out + central + eocd


def compressed(data: bytes) -> bytes:
    b = bytearray(data)
    for at, name in central_entries(data):
        if name.endswith("data.pkl"):
            struct.pack_into("<H", b, at + 10, 8)
    return bytes(b)


def write_hostile() -> None:
    if HOSTILE.exists():
        shutil.rmtree(HOSTILE)
    HOSTILE.mkdir(parents=True)
    for name, data in sorted(hostile().items()):
        (HOSTILE / f"{name}.bin").write_bytes(data)
    (HOSTILE / "MARKER").write_text(MARKER + "\n")
    print("hostile:", len(list(HOSTILE.glob("*.bin"))), "files")
    prove_payloads()


# The cases whose payload Python's own unpickler runs (creating the marker file).
PAYLOADS = ["os-system", "builtins-eval", "builtins-exec-proto4", "subprocess-popen",
            "reduce-top-level", "inst"]


def prove_payloads() -> None:
    """Shows the corpus is real: plain `pickle.loads` of each payload case's data.pkl, in a
    child process, creates the marker file the Rust test checks never appears."""
    import glob
    load = ("import pickle, sys, zipfile\n"
            "z = zipfile.ZipFile(sys.argv[1])\n"
            "n = next(x for x in z.namelist() if x.endswith('data.pkl'))\n"
            "try:\n    pickle.loads(z.read(n))\nexcept Exception:\n    pass\n")
    for name in PAYLOADS:
        for m in glob.glob(MARKER + "*"):
            os.unlink(m)
        subprocess.run([sys.executable, "-c", load, str(HOSTILE / f"{name}.bin")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        made = glob.glob(MARKER + "*")
        assert made, f"{name}: the payload did not run under pickle.loads"
        for m in made:
            os.unlink(m)
    print("payloads proven:", ", ".join(PAYLOADS))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    ap.add_argument("--hostile-only", action="store_true")
    ap.add_argument("--only", nargs="*", help="source fixtures to remake (others' cases kept)")
    a = ap.parse_args()
    write_hostile()
    write_dtypes()
    if a.hostile_only:
        return
    cases = json.loads(OUT.read_text()) if a.only and OUT.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for source, (shards, fused) in FIXTURES.items():
            if a.only and source not in a.only:
                continue
            fixture = make_fixture(source, shards, fused)
            as_bin = materialize(fixture, scratch / "a" / fixture.name)
            renamed = materialize(fixture, scratch / "b" / source)
            st = materialize(TESTDATA / "hf" / source, scratch / "c" / source)
            for outtype in OUTTYPES:
                out = scratch / "out.gguf"
                case = {
                    "fixture": fixture.name,
                    "source": source,
                    "outtype": outtype,
                    "sha256": convert(a.llama_cpp, as_bin, outtype, out),
                    "renamed_sha256": convert(a.llama_cpp, renamed, outtype, out),
                    "safetensors_sha256": convert(a.llama_cpp, st, outtype, out),
                }
                cases[f"{fixture.name}-{outtype}"] = case
                same = case["renamed_sha256"] == case["safetensors_sha256"]
                print(fixture.name, outtype, case["sha256"][:16], "same as safetensors:", same)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(dict(sorted(cases.items())), indent=2) + "\n")


if __name__ == "__main__":
    main()
