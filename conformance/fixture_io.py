"""What the conformance generators share: a committed fixture made whole in a scratch
directory, file digests, and JSON written the way the committed files are.

A fixture of testdata/hf may name some of its files in `shared-files.txt` instead of holding
them: a plain line `name = ../other/file` (a tokenizer or a weight file of another fixture)
or a splice line `name = name.hollow | at source offset length ...` (a file whose large
tensors are stored once elsewhere, see share_tensors.py). `materialize` resolves both, so a
generator sees the directory a user would have.
"""

import hashlib
import json
import shutil
from pathlib import Path

from share_tensors import HOLLOW, SHARED_LIST, parse_list, rebuild

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"


def sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fixture_file(fixture: Path, name: str) -> Path:
    """Where file `name` of fixture directory `fixture` is: in place, or where a plain line of
    its shared-files.txt says."""
    for n, rest in parse_list(fixture):
        if n == name and "|" not in rest:
            return fixture / rest
    return fixture / name


def materialize(src: Path, dst: Path) -> Path:
    """Copies fixture directory `src` to `dst` (replacing it) with every file its
    shared-files.txt names written in place, and without the list or the hollow files."""
    if dst.exists():
        shutil.rmtree(dst)

    def skipped(d, names):
        if Path(d) != src:
            return []
        return [n for n in names if n == SHARED_LIST or n.endswith(HOLLOW)]

    shutil.copytree(src, dst, ignore=skipped)
    for name, rest in parse_list(src):
        if name is None:
            continue
        if "|" in rest:
            (dst / name).write_bytes(rebuild(src, rest))
        else:
            shutil.copyfile((src / rest).resolve(), dst / name)
    return dst


def write_json(path: Path, value) -> None:
    """`value` as indented UTF-8 JSON with a final newline."""
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
