#!/usr/bin/env python3
"""Stores each tensor that several fixtures hold byte for byte only once.

Many generated fixtures of testdata/hf come from the same seed, so the same embedding or
projection appears in a dozen `model.safetensors` files. This tool keeps one *complete*
copy of each such tensor (in the fixture chosen first: the ten reference fixtures, then by
name) and cuts it out of the others. A cut file is stored as `<name>.hollow` and its
fixture's `shared-files.txt` gets a splice line that rebuilds it:

    model.safetensors = model.safetensors.hollow | 2048 ../olmo/model.safetensors 4096 1572864

meaning: take `model.safetensors.hollow`, and at offset 2048 of the rebuilt file insert the
1572864 bytes found at offset 4096 of `../olmo/model.safetensors` (paths relative to the
fixture directory; several `| at source offset length` segments, in increasing `at`).
Sources are always complete stored files, never hollow ones. The Rust tests rebuild the
files through `ggufkit_testsupport::paths::fixture` / `materialize_fixture`; generators that
read a fixture's weights should run `--restore` first and this tool again afterwards.

    conformance/share_tensors.py            # cut shared tensors out (idempotent)
    conformance/share_tensors.py --restore  # rebuild every hollow file in place
    conformance/share_tensors.py --check    # exit 1 if anything could still be shared
"""

import argparse
import hashlib
import json
import os
import struct
import sys
from collections import defaultdict
from pathlib import Path

HF = Path(__file__).resolve().parent.parent / "testdata" / "hf"
# Fixtures the tests also read in place (and the reference ones): never cut.
PREFERRED = ["llama-spm", "llama-bpe", "qwen2", "qwen3", "qwen3moe", "gemma3", "mixtral",
             "phi3", "gpt2", "bert"]
# make_seed_fixtures.py's fixtures copy their base fixture's embeddings: the base keeps them.
SECOND_SEED = "-s2"
MIN_SHARED = 64 * 1024  # smaller tensors are not worth a splice line
SHARED_LIST = "shared-files.txt"
HOLLOW = ".hollow"


def tensor_regions(path):
    """(absolute offset, length) of each tensor's data in a safetensors file."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out.append((8 + n + begin, end - begin))
    return data, sorted(out)


def parse_list(fixture):
    """shared-files.txt as [(name, text after '=')], comments and blanks kept as (None, line)."""
    path = fixture / SHARED_LIST
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        s = line.strip()
        if not s or s.startswith("#") or "=" not in s:
            out.append((None, line))
            continue
        name, rest = s.split("=", 1)
        out.append((name.strip(), rest.strip()))
    return out


def write_list(fixture, entries):
    lines = [rest if name is None else f"{name} = {rest}" for name, rest in entries]
    (fixture / SHARED_LIST).write_text("\n".join(lines) + "\n")


def rebuild(fixture, rest):
    """The bytes a splice line `stored | at source offset length ...` describes."""
    parts = [p.strip() for p in rest.split("|")]
    stored = (fixture / parts[0]).read_bytes()
    out = bytearray()
    pos = 0
    for seg in parts[1:]:
        at, src, off, length = seg.split()
        at, off, length = int(at), int(off), int(length)
        take = at - len(out)
        out += stored[pos:pos + take]
        pos += take
        with open(fixture / src, "rb") as f:
            f.seek(off)
            chunk = f.read(length)
        assert len(chunk) == length, f"{fixture}: {src} too short"
        out += chunk
    out += stored[pos:]
    return bytes(out)


def restore():
    for fixture in sorted(p for p in HF.iterdir() if p.is_dir()):
        entries = parse_list(fixture)
        kept = []
        changed = False
        for name, rest in entries:
            if name is not None and "|" in rest:
                (fixture / name).write_bytes(rebuild(fixture, rest))
                (fixture / rest.split("|")[0].strip()).unlink()
                changed = True
                continue
            kept.append((name, rest))
        if changed:
            if any(n is not None for n, _ in kept):
                write_list(fixture, kept)
            else:
                (fixture / SHARED_LIST).unlink()
            print(f"restored {fixture.name}")


def share(check):
    files = []  # complete safetensors files, preferred fixtures first, second seeds last
    order = {name: i for i, name in enumerate(PREFERRED)}
    for p in sorted(HF.glob("*/*.safetensors"),
                    key=lambda p: (order.get(p.parent.name, len(order)),
                                   p.parent.name.endswith(SECOND_SEED), str(p))):
        if not p.is_symlink():
            files.append(p)
    by_hash = defaultdict(list)
    loaded = {}
    for p in files:
        try:
            data, regions = tensor_regions(p)
        except (ValueError, KeyError, struct.error) as e:
            print(f"skipped {p}: {e}", file=sys.stderr)
            continue
        loaded[p] = (data, regions)
        for off, length in regions:
            if length >= MIN_SHARED:
                by_hash[hashlib.sha256(data[off:off + length]).digest()].append((p, off, length))
    # Files that stay whole: another file copies from them (a splice, or a plain
    # `shared-files.txt` line of another fixture).
    complete = set()
    for fixture in HF.iterdir():
        for name, rest in parse_list(fixture) if fixture.is_dir() else []:
            if name is not None and "|" not in rest:
                complete.add((fixture / rest).resolve())
            elif name is not None:
                # The source of each splice segment (`| at source offset length`).
                for seg in rest.split("|")[1:]:
                    parts = seg.split()
                    if len(parts) == 4:
                        complete.add((fixture / parts[1]).resolve())
    complete = {p for p in files if p.resolve() in complete}
    cuts = defaultdict(list)  # file -> [(offset, length, source, source offset)]
    # Biggest savings first, so their sources are chosen freely.
    groups = sorted(by_hash.values(), key=lambda pl: -len({p for p, _, _ in pl}) * pl[0][2])
    for places in groups:
        owners = {p for p, _, _ in places}
        if len(owners) < 2:
            continue
        source = next((pl for pl in places if pl[0] in complete), None)
        if source is None:
            source = next((pl for pl in places if pl[0] not in cuts), None)
        if source is None:
            continue  # every holder is already cut elsewhere; keep them as they are
        complete.add(source[0])
        for p, off, length in places:
            if p not in complete and p != source[0]:
                cuts[p].append((off, length, source[0], source[1]))
    saved = sum(length for c in cuts.values() for _, length, _, _ in c)
    print(f"{len(cuts)} files cut, {saved / 1e6:.2f} MB saved")
    if check:
        return 1 if cuts else 0
    for p, segs in sorted(cuts.items()):
        data = loaded[p][0]
        segs.sort()
        kept = bytearray()
        pos = 0
        line = [p.name + HOLLOW]
        for off, length, src, src_off in segs:
            kept += data[pos:off]
            pos = off + length
            line.append(f"{off} {os.path.relpath(src, p.parent)} {src_off} {length}")
        kept += data[pos:]
        (p.parent / (p.name + HOLLOW)).write_bytes(kept)
        entries = [e for e in parse_list(p.parent) if e[0] != p.name]
        entries.append((p.name, " | ".join(line)))
        write_list(p.parent, entries)
        assert rebuild(p.parent, " | ".join(line)) == data, p
        p.unlink()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restore", action="store_true", help="rebuild every hollow file in place")
    ap.add_argument("--check", action="store_true", help="exit 1 if a tensor could be shared")
    args = ap.parse_args()
    if args.restore:
        restore()
        return 0
    return share(args.check)


if __name__ == "__main__":
    sys.exit(main())
