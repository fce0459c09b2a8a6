#!/usr/bin/env python3
"""Print what the Python `gguf` package (the ecosystem's reference reader) sees in GGUF files.

For each file given, one JSON line: {"file", "version", "data_offset", "kv": [[key, type, value]],
"tensors": [[name, type, ne, offset, nbytes, sha256]]}. Scalars as JSON numbers/bools/strings;
arrays as {"array_type", "len", "sha256"} over the canonical little-endian item encoding.
Used by tests/suite/gguf/interop.rs to check that gguf-py reads our files exactly as ggufkit does.
Exit status 3 when the gguf package is not installed.
"""
import hashlib
import json
import sys

try:
    import numpy as np
    from gguf import GGUFReader, GGUFValueType
except ImportError as e:  # pragma: no cover
    print(f"gguf package not available: {e}", file=sys.stderr)
    sys.exit(3)


def item_bytes(field, idx, sub):
    part = field.parts[idx]
    if sub == GGUFValueType.STRING:
        raw = part.tobytes()
        return len(raw).to_bytes(8, "little") + raw
    arr = np.asarray(part)
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def scalar(value, vtype):
    if vtype == GGUFValueType.BOOL:
        return bool(value)
    if vtype in (GGUFValueType.FLOAT32, GGUFValueType.FLOAT64):
        return float(value)
    return int(value)


def view(path):
    reader = GGUFReader(path, "r")
    kv = []
    version = None
    for key, field in reader.fields.items():
        if key == "GGUF.version":
            version = int(field.parts[field.data[0]][0])
        if key.startswith("GGUF."):
            continue
        main = field.types[0]
        if main == GGUFValueType.ARRAY:
            sub = field.types[-1]
            digest = hashlib.sha256()
            for i in field.data:
                digest.update(item_bytes(field, i, sub))
            value = {"array_type": sub.name, "len": len(field.data), "sha256": digest.hexdigest()}
        elif main == GGUFValueType.STRING:
            value = field.parts[field.data[0]].tobytes().decode("utf-8", errors="surrogateescape")
        else:
            value = scalar(np.asarray(field.parts[field.data[0]]).reshape(-1)[0], main)
        kv.append([key, main.name, value])
    tensors = []
    with open(path, "rb") as fh:
        for t in reader.tensors:
            fh.seek(int(t.data_offset))
            data = fh.read(int(t.n_bytes))
            tensors.append([t.name, t.tensor_type.name, [int(x) for x in t.shape],
                            int(t.data_offset) - int(reader.data_offset), int(t.n_bytes),
                            hashlib.sha256(data).hexdigest()])
    return {"file": path, "version": version, "data_offset": int(reader.data_offset), "kv": kv,
            "tensors": tensors}


for p in sys.argv[1:]:
    print(json.dumps(view(p)))
