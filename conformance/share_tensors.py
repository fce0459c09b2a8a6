#!/usr/bin/env python3
"""Stores each tensor that several fixtures hold byte for byte only once.

Many generated fixtures of testdata/hf come from the same seed, so the same embedding or
projection appears in a dozen weight files, and the PyTorch checkpoints of the `-bin`
fixtures hold the tensors of their safetensors twins. This tool keeps one copy of each such
tensor (in the fixture chosen first: the ten reference fixtures, then by name, second seeds
and PyTorch checkpoints last) and cuts it out of the others. A cut file is stored as
`<name>.hollow` and its fixture's `shared-files.txt` gets a splice line that rebuilds it:

    model.safetensors = model.safetensors.hollow | 2048 ../olmo/model.safetensors 4096 1572864

meaning: take `model.safetensors.hollow`, and at offset 2048 of the rebuilt file insert the
1572864 bytes found at offset 4096 of `../olmo/model.safetensors` (paths relative to the
fixture directory; several `| at source offset length` segments, in increasing `at`). A
source is a stored file: a complete one, or a `.hollow` file, for a tensor it still holds.
Tensors are the data regions of a safetensors file and the stored (uncompressed) storages
`*/data/<key>` of a PyTorch zip checkpoint. The Rust tests rebuild the files through
`ggufkit_testsupport::paths::fixture` / `materialize_fixture`; generators that read a
fixture's weights should run `--restore` first and this tool again afterwards.

    conformance/share_tensors.py            # cut shared tensors out (idempotent)
    conformance/share_tensors.py --restore  # rebuild every hollow file in place
    conformance/share_tensors.py --check    # exit 1 if the stored files differ from the plan

It also packs the small golden files (conformance/golden_pack.py; `--restore` unpacks them).
"""

import argparse
import hashlib
import json
import os
import struct
import sys
from collections import defaultdict
from pathlib import Path

import golden_pack

HF = Path(__file__).resolve().parent.parent / "testdata" / "hf"
# Fixtures the tests also read in place, the reference ones and the sources of borrowed
# tensors: never cut.
PREFERRED = ["llama-spm", "llama-bpe", "qwen2", "qwen3", "qwen3moe", "gemma3", "mixtral",
             "phi3", "gpt2", "bert", "glm4"]
# make_seed_fixtures.py's fixtures copy their base fixture's embeddings: the base keeps them.
SECOND_SEED = "-s2"
MIN_SHARED = 64 * 1024  # smaller tensors are not worth a splice line
SHARED_LIST = "shared-files.txt"
HOLLOW = ".hollow"
# Weight files whose tensors are shared.
WEIGHTS = (".safetensors", ".bin")
ZIP_LOCAL = b"PK\x03\x04"
ZIP_CENTRAL = b"PK\x01\x02"
ZIP_END = b"PK\x05\x06"


def safetensors_regions(data):
    """(absolute offset, length) of each tensor's data in a safetensors file."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out.append((8 + n + begin, end - begin))
    return sorted(out)


def zip_regions(data):
    """(absolute offset, length) of each stored storage (`*/data/<key>`) of a PyTorch zip
    checkpoint, found through the central directory."""
    end = data.rfind(ZIP_END)
    if end < 0:
        raise ValueError("no end of central directory")
    count, _, at = struct.unpack("<HII", data[end + 10:end + 20])
    out = []
    for _ in range(count):
        if data[at:at + 4] != ZIP_CENTRAL:
            raise ValueError(f"no central header at {at}")
        method, = struct.unpack("<H", data[at + 10:at + 12])
        size, = struct.unpack("<I", data[at + 20:at + 24])
        nlen, xlen, clen = struct.unpack("<HHH", data[at + 28:at + 34])
        local, = struct.unpack("<I", data[at + 42:at + 46])
        name = data[at + 46:at + 46 + nlen].decode()
        at += 46 + nlen + xlen + clen
        if method != 0 or "/data/" not in name:
            continue
        if data[local:local + 4] != ZIP_LOCAL:
            raise ValueError(f"{name}: no local header at {local}")
        lnlen, lxlen = struct.unpack("<HH", data[local + 26:local + 30])
        out.append((local + 30 + lnlen + lxlen, size))
    return sorted(out)


def tensor_regions(path, data):
    """The tensors' data regions of weight file `path` whose bytes are `data`."""
    return zip_regions(data) if path.suffix == ".bin" else safetensors_regions(data)


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
    """Writes shared-files.txt, or removes it when `entries` names no file."""
    if any(n is not None for n, _ in entries):
        lines = [rest if name is None else f"{name} = {rest}" for name, rest in entries]
        (fixture / SHARED_LIST).write_text("\n".join(lines) + "\n")
    elif (fixture / SHARED_LIST).exists():
        (fixture / SHARED_LIST).unlink()


def foreign(rest):
    """Whether a splice line's stored part lives outside the fixture (a tokenizer variant
    stored as a splice of its base under tokenizers/, see share_tokenizer_variants): such
    lines are kept as written by the tensor passes."""
    return "|" in rest and "/" in rest.split("|")[0].strip()


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


def fixtures():
    return sorted(p for p in HF.iterdir() if p.is_dir())


def whole_files():
    """Every weight file as the converters see it: {path: bytes}, a cut file rebuilt under
    its own name. Read completely before anything is written, since sources may be hollow
    files that are about to change."""
    out = {}
    for fixture in fixtures():
        for name, rest in parse_list(fixture):
            if name is not None and "|" in rest and not foreign(rest):
                out[fixture / name] = rebuild(fixture, rest)
        for p in sorted(fixture.iterdir()):
            if p.suffix in WEIGHTS and p.is_file() and not p.is_symlink():
                out[p] = p.read_bytes()
    return out


def restore():
    restore_tokenizer_variants()
    whole = whole_files()
    for fixture in fixtures():
        entries = parse_list(fixture)
        kept = [(n, r) for n, r in entries if n is None or "|" not in r or foreign(r)]
        if len(kept) == len(entries):
            continue
        for name, rest in entries:
            if name is not None and "|" in rest and not foreign(rest):
                (fixture / name).write_bytes(whole[fixture / name])
                (fixture / rest.split("|")[0].strip()).unlink()
        write_list(fixture, kept)
        print(f"restored {fixture.name}")


def plan(whole):
    """Which tensors to cut out of which files: {file: [(offset, length, source, source
    offset)]}, sources given in the whole files' coordinates."""
    order = {name: i for i, name in enumerate(PREFERRED)}
    files = sorted(whole, key=lambda p: (order.get(p.parent.name, len(order)),
                                         p.suffix == ".bin",
                                         p.parent.name.endswith(SECOND_SEED), str(p)))
    by_hash = defaultdict(list)
    for p in files:
        data = whole[p]
        try:
            regions = tensor_regions(p, data)
        except (ValueError, KeyError, struct.error, UnicodeDecodeError) as e:
            print(f"skipped {p}: {e}", file=sys.stderr)
            continue
        for off, length in regions:
            if length >= MIN_SHARED:
                by_hash[hashlib.sha256(data[off:off + length]).digest()].append((p, off, length))
    # Files that stay whole: a plain `shared-files.txt` line of another fixture names them.
    named = set()
    for fixture in fixtures():
        for name, rest in parse_list(fixture):
            if name is not None and "|" not in rest:
                named.add((fixture / rest).resolve())
    complete = {p for p in files if p.resolve() in named}
    cuts = defaultdict(list)
    # Biggest savings first, so their sources are chosen freely.
    groups = sorted(by_hash.values(), key=lambda pl: -len({p for p, _, _ in pl}) * pl[0][2])
    for places in groups:
        if len({p for p, _, _ in places}) < 2:
            continue
        # A file that must stay whole, else one not cut yet, else the first (its hollow
        # file keeps this tensor).
        source = next((pl for pl in places if pl[0] in complete), None) \
            or next((pl for pl in places if pl[0] not in cuts), None) or places[0]
        for p, off, length in places:
            if p not in complete and p != source[0]:
                cuts[p].append((off, length, source[0], source[1]))
    return cuts


def stored_at(cuts, src, off):
    """Where the byte at `off` of whole file `src` is stored: its hollow file when it is cut
    (the byte itself is never cut out: it is a source)."""
    if src not in cuts:
        return src, off
    before = sum(length for o, length, _, _ in cuts[src] if o < off)
    return src.parent / (src.name + HOLLOW), off - before


def layout(whole, cuts):
    """{fixture: shared-files.txt entries} and {hollow path: bytes} of the plan."""
    lists, hollows = {}, {}
    for fixture in fixtures():
        entries = [(n, r) for n, r in parse_list(fixture)
                   if n is None or "|" not in r or foreign(r)]
        for p in sorted(q for q in cuts if q.parent == fixture):
            data = whole[p]
            kept = bytearray()
            pos = 0
            line = [p.name + HOLLOW]
            for off, length, src, src_off in sorted(cuts[p]):
                kept += data[pos:off]
                pos = off + length
                at, where = stored_at(cuts, src, src_off)
                line.append(f"{off} {os.path.relpath(at, p.parent)} {where} {length}")
            kept += data[pos:]
            hollows[p.parent / (p.name + HOLLOW)] = bytes(kept)
            entries.append((p.name, " | ".join(line)))
        lists[fixture] = entries
    return lists, hollows


def share(check):
    whole = whole_files()
    cuts = plan(whole)
    lists, hollows = layout(whole, cuts)
    saved = sum(length for c in cuts.values() for _, length, _, _ in c)
    print(f"{len(cuts)} files cut, {saved / 1e6:.2f} MB saved")
    changed = [f for f in fixtures() if lists[f] != parse_list(f)]
    if check:
        for f in changed:
            print(f"{f.name}: not stored as planned", file=sys.stderr)
        return 1 if changed else 0
    for fixture in changed:
        for name, rest in parse_list(fixture):
            if name is not None and "|" in rest and not foreign(rest):
                (fixture / rest.split("|")[0].strip()).unlink()
        for p in (p for p in whole if p.parent == fixture):
            if p in cuts:
                if p.exists():
                    p.unlink()
            else:
                p.write_bytes(whole[p])
        for h, data in hollows.items():
            if h.parent == fixture:
                h.write_bytes(data)
        write_list(fixture, lists[fixture])
    for p in cuts:
        assert rebuild(p.parent, dict(lists[p.parent])[p.name]) == whole[p], p
    return 0


# Tokenizer files that differ from another stored tokenizer file of the same name only in a
# short stretch (the GLM variants of the SmolLM vocabulary add a few tokens to it): stored as
# `<file>.hollow` (the differing head) plus the rest spliced from the base, recorded in the
# variant directory's shared-files.txt and written into each fixture's line that names it.
TOKENIZERS = HF.parent / "tokenizers"
VARIANT_MIN = 256 * 1024  # only big files are worth a splice
VARIANT_SHARE = 0.9  # at least this share of the file must come from the base


def variant_line(var_dir, name):
    """The splice line recorded for tokenizer file `name` of `var_dir`, if it is stored so."""
    return dict((n, r) for n, r in parse_list(var_dir) if n is not None).get(name)


def restore_tokenizer_variants():
    """Rebuilds every tokenizer variant whole and gives the fixtures plain lines again."""
    for var_dir in sorted(d for d in TOKENIZERS.iterdir() if d.is_dir()):
        for name, rest in [e for e in parse_list(var_dir) if e[0] is not None]:
            (var_dir / name).write_bytes(rebuild(var_dir, rest))
            (var_dir / rest.split("|")[0].strip()).unlink()
            write_list(var_dir, [e for e in parse_list(var_dir) if e[0] != name])
            target = f"../../tokenizers/{var_dir.name}/{name}"
            for fixture in fixtures():
                entries = parse_list(fixture)
                new = [(n, target if n is not None and foreign(r)
                        and r.split("|")[0].strip() == target + HOLLOW else r)
                       for n, r in entries]
                if new != entries:
                    write_list(fixture, new)


def share_tokenizer_variants(check):
    """Stores each near-copy of a bigger tokenizer file as a splice of it; with `check`,
    returns 1 if one is still stored whole."""
    whole = sorted(p for p in TOKENIZERS.glob("*/*") if p.is_file() and p.parent.name != "shared"
                   and not p.name.endswith(HOLLOW) and p.name != SHARED_LIST
                   and p.stat().st_size >= VARIANT_MIN)
    todo = []
    for p in whole:
        data = p.read_bytes()
        for base in whole:
            if base == p or base.name != p.name or base.stat().st_size > len(data) or \
                    any(v == base for v, _ in todo):
                continue
            b = base.read_bytes()
            head = 0
            while head < min(len(b), len(data)) and b[head] == data[head]:
                head += 1
            tail = 0
            while tail < min(len(b), len(data)) - head and b[-1 - tail] == data[-1 - tail]:
                tail += 1
            if tail >= VARIANT_SHARE * len(data):
                todo.append((p, (base, len(b) - tail, tail)))
                break
    if check:
        for p, _ in todo:
            print(f"{p}: a near-copy of another tokenizer file, stored whole", file=sys.stderr)
        return 1 if todo else 0
    for p, (base, off, tail) in todo:
        data = p.read_bytes()
        kept = data[:len(data) - tail]
        hollow = p.parent / (p.name + HOLLOW)
        hollow.write_bytes(kept)
        line = f"{hollow.name} | {len(kept)} {os.path.relpath(base, p.parent)} {off} {tail}"
        write_list(p.parent, [(p.name, line)])
        assert rebuild(p.parent, line) == data, p
        p.unlink()
        target = f"../../tokenizers/{p.parent.name}/{p.name}"
        fixture_line = (f"../../tokenizers/{p.parent.name}/{hollow.name} | {len(kept)} "
                        f"../../tokenizers/{base.parent.name}/{base.name} {off} {tail}")
        for fixture in fixtures():
            entries = parse_list(fixture)
            new = [(n, fixture_line if r == target else r) for n, r in entries]
            if new != entries:
                write_list(fixture, new)
                assert rebuild(fixture, fixture_line) == data, fixture
    print(f"{len(todo)} tokenizer variants stored as splices")
    return 0


# Small files several fixtures hold byte for byte (a filesystem block each): stored once
# under tokenizers/shared/<sha256 prefix>/ and named by a plain shared-files.txt line.
SMALL_FILES = ("tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
               "tokenizer.model", "tokenizer.json", "vocab.json", "merges.txt", "vocab.txt",
               "added_tokens.json")
# Fixtures some tests read in place (no shared-files.txt may be added to them).
IN_PLACE = ("llama-spm", "qwen2", "gemma3-vl", "phi3")
SHARED_SMALL = HF.parent / "tokenizers" / "shared"


def share_small_files(check):
    """Stores each small file that two or more fixtures hold identically once; with `check`,
    returns 1 if such a file is still stored twice."""
    groups = {}
    for fixture in fixtures():
        if fixture.name in IN_PLACE:
            continue
        for name in SMALL_FILES:
            p = fixture / name
            if p.is_file() and not p.is_symlink():
                digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                groups.setdefault((name, digest), []).append(fixture)
    # A file one fixture holds is stored once too when an earlier run already stored it.
    twice = {k: v for k, v in groups.items()
             if len(v) > 1 or (SHARED_SMALL / k[1] / k[0]).is_file()}
    if check:
        for (name, _), fs in sorted(twice.items()):
            print(f"{name}: stored {len(fs)} times ({fs[0].name}, ...)", file=sys.stderr)
        return 1 if twice else 0
    for (name, digest), fs in sorted(twice.items()):
        stored = SHARED_SMALL / digest / name
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_bytes((fs[0] / name).read_bytes())
        for fixture in fs:
            (fixture / name).unlink()
            # Plain lines before splice lines, as share() lays the list out.
            entries = [(n, r) for n, r in parse_list(fixture) if n != name]
            plain = [e for e in entries if e[0] is None or "|" not in e[1]]
            splices = [e for e in entries if e not in plain]
            link = (name, f"../../tokenizers/shared/{digest}/{name}")
            write_list(fixture, plain + [link] + splices)
    # A plain line of another fixture that named a moved file names its new place.
    for fixture in fixtures():
        entries = parse_list(fixture)
        moved = []
        for n, r in entries:
            if n is not None and "|" not in r and not (fixture / r).is_file():
                owner = (fixture / r).resolve()
                r = dict((a, b) for a, b in parse_list(owner.parent) if a is not None)[owner.name]
            moved.append((n, r))
        if moved != entries:
            write_list(fixture, moved)
    print(f"{sum(len(v) for v in twice.values())} small files now stored once")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restore", action="store_true", help="rebuild every hollow file in place")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the fixtures are not stored as planned")
    args = ap.parse_args()
    if args.restore:
        restore()
        golden_pack.restore()
        return 0
    return share(args.check) or share_small_files(args.check) \
        or share_tokenizer_variants(args.check) or golden_pack.pack_all(args.check)


if __name__ == "__main__":
    sys.exit(main())
