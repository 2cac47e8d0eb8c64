#!/usr/bin/env python3
"""Interop check between ember's safetensors checkpoints and Python's `safetensors` package.

Used by tests/nn/test_checkpoint.cpp (run with the project venv, scripts/python-venv.sh).

A SPEC is a JSON file:
  {"tensors": {NAME: {"dtype": "F32"|"F64"|"I32"|"I64"|"U8"|"BOOL", "shape": [...],
                      "bits": [...]}},
   "metadata": {KEY: VALUE}}
where "bits" lists each element's raw little-endian bit pattern as an unsigned integer (uint32 for
F32/I32, uint64 for F64/I64, uint8 for U8/BOOL), so values compare bit for bit (NaN payloads, -0.0).

  safetensors_interop.py write SPEC FILE   writes the SPEC's tensors and metadata with safetensors
  safetensors_interop.py check FILE SPEC   loads FILE with safetensors and compares it with SPEC
Exit status 0 on success; on a mismatch, 1 with one line per problem on stdout.
"""
import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

# dtype -> (numpy dtype, unsigned type of the same width)
DTYPES = {
    "F32": (np.float32, np.uint32),
    "F64": (np.float64, np.uint64),
    "I32": (np.int32, np.uint32),
    "I64": (np.int64, np.uint64),
    "U8": (np.uint8, np.uint8),
    "BOOL": (np.bool_, np.uint8),
}


def to_array(entry):
    dtype, bits_type = DTYPES[entry["dtype"]]
    bits = np.array(entry["bits"], dtype=bits_type)
    return bits.view(dtype).reshape(entry["shape"])


def to_bits(array, dtype_name):
    _, bits_type = DTYPES[dtype_name]
    return np.ascontiguousarray(array).reshape(-1).view(bits_type).tolist()


def write(spec_path, out_path):
    with open(spec_path) as f:
        spec = json.load(f)
    arrays = {name: to_array(e) for name, e in spec["tensors"].items()}
    save_file(arrays, out_path, metadata=spec.get("metadata") or None)
    return 0


def check(file_path, spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    problems = []
    with safe_open(file_path, framework="np") as f:
        metadata = f.metadata() or {}
        arrays = {name: f.get_tensor(name) for name in f.keys()}
    if metadata != (spec.get("metadata") or {}):
        problems.append(f"metadata {metadata!r} != expected {spec.get('metadata')!r}")
    expected = spec["tensors"]
    if set(arrays) != set(expected):
        problems.append(f"names {sorted(arrays)} != expected {sorted(expected)}")
    for name, e in expected.items():
        if name not in arrays:
            continue
        a = arrays[name]
        want_dtype = DTYPES[e["dtype"]][0]
        if a.dtype != np.dtype(want_dtype):
            problems.append(f"{name}: dtype {a.dtype} != expected {np.dtype(want_dtype)}")
            continue
        if list(a.shape) != list(e["shape"]):
            problems.append(f"{name}: shape {list(a.shape)} != expected {e['shape']}")
            continue
        got = to_bits(a, e["dtype"])
        if got != e["bits"]:
            bad = next(i for i, (x, y) in enumerate(zip(got, e["bits"])) if x != y)
            problems.append(f"{name}: element {bad} has bits {got[bad]}, expected {e['bits'][bad]}")
    for p in problems:
        print(p)
    if not problems:
        print(f"ok: {len(arrays)} tensors match")
    return 1 if problems else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "write":
        return write(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
