#!/usr/bin/env python3
"""Writes the HF classes the pinned reference converter registers.

The reference's converter package keeps two dictionaries in its `conversion/__init__.py`:
one from an HF class name (`architectures[0]` of config.json) to the module of its text
converter, one from an HF class name to the module of its projector (`--mmproj`) converter.
This script reads both with Python's parser (the file is never imported, so nothing of the
reference runs) and writes them, sorted, as `testdata/reference-classes.json`:

    {"text": {"AfmoeForCausalLM": "afmoe", ...}, "mmproj": {...}}

The converters' test `repository::reference_classes` checks that
`gguf-convert --list-architectures` names every class of both maps.

Usage: extract_reference_classes.py LLAMA_CPP_DIR [OUT_JSON]
"""
import ast
import json
import pathlib
import sys

MAPS = {"TEXT_MODEL_MAP": "text", "MMPROJ_MODEL_MAP": "mmproj"}


def extract(init_py: pathlib.Path) -> dict:
    tree = ast.parse(init_py.read_text(encoding="utf-8"), filename=str(init_py))
    found = {}
    for node in tree.body:
        target = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value = node.target.id, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        if target not in MAPS:
            continue
        if not isinstance(value, ast.Dict):
            sys.exit(f"{init_py}: {target} is not a dict literal")
        entries = {}
        for k, v in zip(value.keys, value.values):
            if not (isinstance(k, ast.Constant) and isinstance(v, ast.Constant)):
                sys.exit(f"{init_py}: {target} has a non-literal entry at line {k.lineno}")
            if k.value in entries:
                sys.exit(f"{init_py}: {target} names {k.value} twice")
            entries[k.value] = v.value
        found[MAPS[target]] = dict(sorted(entries.items()))
    missing = set(MAPS.values()) - set(found)
    if missing:
        sys.exit(f"{init_py}: no {', '.join(sorted(missing))} map")
    return {"text": found["text"], "mmproj": found["mmproj"]}


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2]) if len(sys.argv) == 3 else (
        pathlib.Path(__file__).resolve().parent.parent / "testdata" / "reference-classes.json")
    maps = extract(root / "conversion" / "__init__.py")
    out.write_text(json.dumps(maps, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(maps['text'])} text classes, {len(maps['mmproj'])} projector classes")


if __name__ == "__main__":
    main()
