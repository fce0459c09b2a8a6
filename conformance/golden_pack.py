#!/usr/bin/env python3
"""Stores the small text files of testdata/golden as one pack file per directory.

The golden data is a few thousand small JSON and text files (manifests, status.json,
commands.txt, variants.json); each costs a whole file-system block on disk, more than half
of them empty. For every top-level directory `golden/D/`, this tool moves each text file
under it smaller than 64 KiB into `golden/D.pack`; binary and larger files stay in `D/`, and
so do the inputs of the reference's commands (`files/` directories: calibration text,
imatrix files), which scripts read as files.
A pack is plain text, one entry per file, in path order:

    === <path relative to D> <length in bytes>
    <exactly that many bytes of content>
    <one newline>

The Rust tests read the golden data through `ggufkit_testsupport::paths::testdata`, which
unpacks the packs once per build into the target directory. Generators write loose files as
before: run this tool (or `share_tensors.py`, which runs it) afterwards to pack them, and
`--restore` before a generator that reads existing golden files.

    conformance/golden_pack.py            # pack loose small text files (idempotent)
    conformance/golden_pack.py --restore  # unpack every pack into loose files
    conformance/golden_pack.py --check    # exit 1 if a packable file is loose
    conformance/golden_pack.py --cat llama-spm/convert-f16.json   # one file, loose or packed
    conformance/golden_pack.py --merge-driver BASE OURS THEIRS     # git's merge driver (below)

Two branches that both changed a pack merge entry by entry, not line by line (a line merge
can leave an entry's length wrong). `.gitattributes` names the driver `golden-pack` for the
packs; a checkout enables it once with

    git config merge.golden-pack.driver 'python3 conformance/golden_pack.py --merge-driver %O %A %B'

Each entry is taken from the side that changed it; an entry both sides changed differently
keeps ours, is named on stderr, and the merge stops as a conflict (regenerate that golden
file). Without the setting, git merges packs as text.
"""

import argparse
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "testdata" / "golden"
SUFFIX = ".pack"
MAX_PACKED = 64 * 1024
HEADER = "=== "
# Directories of command inputs, kept as files.
INPUTS = "files"


def packable(path):
    """A text file under the size limit, not a command input: valid UTF-8, no NUL, no space
    in its path."""
    if not path.is_file() or path.is_symlink() or path.stat().st_size >= MAX_PACKED:
        return False
    if INPUTS in path.relative_to(GOLDEN).parts[:-1]:
        return False
    data = path.read_bytes()
    if b"\0" in data or " " in path.name or "\n" in path.name:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_pack(pack):
    """{relative path: bytes} of one pack; raises ValueError naming the pack on bad input."""
    data = pack.read_bytes()
    out = {}
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        line = data[pos:end].decode("utf-8") if end >= 0 else ""
        parts = line[len(HEADER):].rsplit(" ", 1)
        if end < 0 or not line.startswith(HEADER) or len(parts) != 2 or not parts[1].isdigit():
            raise ValueError(f"{pack}: bad entry header at byte {pos}")
        rel, size = parts[0], int(parts[1])
        start = end + 1
        if start + size + 1 > len(data) or data[start + size:start + size + 1] != b"\n":
            raise ValueError(f"{pack}: entry {rel} runs past the end")
        out[rel] = data[start:start + size]
        pos = start + size + 1
    return out


def write_pack(pack, files):
    chunks = []
    for rel in sorted(files):
        chunks.append(f"{HEADER}{rel} {len(files[rel])}\n".encode())
        chunks.append(files[rel] + b"\n")
    pack.write_bytes(b"".join(chunks))


def loose_packable(directory):
    return sorted(p for p in directory.rglob("*") if packable(p))


def remove_empty_dirs(directory):
    for d in sorted((p for p in directory.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    if directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()


def pack_all(check):
    """Moves loose packable files into their directory's pack (a loose file replaces the
    packed entry of the same path). With `check`, returns 1 if any file is loose instead."""
    loose = 0
    for d in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        files = loose_packable(d)
        if not files:
            continue
        loose += len(files)
        if check:
            print(f"golden/{d.name}: {len(files)} small files not packed "
                  f"(first: {files[0].relative_to(GOLDEN)})", file=sys.stderr)
            continue
        pack = GOLDEN / (d.name + SUFFIX)
        entries = read_pack(pack) if pack.is_file() else {}
        for p in files:
            entries[p.relative_to(d).as_posix()] = p.read_bytes()
        write_pack(pack, entries)
        for p in files:
            p.unlink()
        remove_empty_dirs(d)
    if check:
        return 1 if loose else 0
    print(f"{loose} golden files packed")
    return 0


def read_golden(rel):
    """The bytes of `golden/<rel>`, loose or from its directory's pack."""
    loose = GOLDEN / rel
    if loose.is_file():
        return loose.read_bytes()
    top, _, rest = rel.partition("/")
    pack = GOLDEN / (top + SUFFIX)
    entries = read_pack(pack) if pack.is_file() else {}
    if rest not in entries:
        raise FileNotFoundError(f"golden/{rel}: neither a file nor in golden/{top}{SUFFIX}")
    return entries[rest]


def merge_packs(base, ours, theirs):
    """Three-way merge of pack contents ({path: bytes} each): (merged, paths in conflict)."""
    merged, conflicts = {}, []
    for rel in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(rel), ours.get(rel), theirs.get(rel)
        if o == t or t == b:
            v = o
        elif o == b:
            v = t
        else:
            conflicts.append(rel)
            v = o
        if v is not None:
            merged[rel] = v
    return merged, conflicts


def merge_driver(base, ours, theirs):
    """git's merge driver: writes the merge of the three packs to `ours`; 1 on a conflict."""
    sides = [read_pack(Path(p)) if Path(p).stat().st_size else {} for p in (base, ours, theirs)]
    merged, conflicts = merge_packs(*sides)
    write_pack(Path(ours), merged)
    for rel in conflicts:
        print(f"golden pack {ours}: {rel} changed on both sides; ours kept", file=sys.stderr)
    return 1 if conflicts else 0


def restore():
    """Writes every packed file back as a loose file and removes the packs."""
    for pack in sorted(GOLDEN.glob("*" + SUFFIX)):
        d = GOLDEN / pack.name[:-len(SUFFIX)]
        for rel, data in read_pack(pack).items():
            p = d / rel
            if not p.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
        pack.unlink()
        print(f"unpacked golden/{pack.name}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restore", action="store_true", help="unpack every pack into loose files")
    ap.add_argument("--check", action="store_true", help="exit 1 if a packable file is loose")
    ap.add_argument("--cat", metavar="PATH", help="print golden/PATH, loose or packed")
    ap.add_argument("--merge-driver", nargs=3, metavar=("BASE", "OURS", "THEIRS"),
                    help="merge three versions of a pack into OURS (git's %%O %%A %%B)")
    args = ap.parse_args()
    if args.merge_driver:
        return merge_driver(*args.merge_driver)
    if args.cat:
        sys.stdout.buffer.write(read_golden(args.cat))
        return 0
    if args.restore:
        restore()
        return 0
    return pack_all(args.check)


if __name__ == "__main__":
    sys.exit(main())
