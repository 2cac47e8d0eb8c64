#!/usr/bin/env python3
"""Counts the #include lines that climb a layer (DESIGN.md, Layout) and the private headers that one
layer reads from another.

Layers, bottom to top: support, env, ir, schedule, codegen, runtime, search, engine, tensor (with
jit), io/nn/optim/onnx/dist, ppo, apps. env (the environments) depends on support only, so it sits at the bottom. A file's layer is its directory (src/<layer>/, apps/); a public header's layer is the one
that implements it (the table below). An include climbs when the header's layer is above the file's.
A private include crosses when a file reads src/<other layer>/ (tests and bench count as outsiders).

Usage: scripts/layer_includes.py [ROOT] [-v] [--check]   (ROOT: a source tree, default: this
checkout; --check: exit status 1 when an include climbs a layer, listing them; ctest runs it)
"""
import os
import re
import sys

ORDER = ["support", "env", "ir", "schedule", "codegen", "runtime", "search", "engine", "tensor", "io",
         "ppo", "apps", "outside"]
LEVEL = {name: i for i, name in enumerate(ORDER)}
LEVEL.update({"nn": LEVEL["io"], "optim": LEVEL["io"], "onnx": LEVEL["io"], "dist": LEVEL["io"], "tests": LEVEL["outside"],
              "bench": LEVEL["outside"]})

# Public headers (include/ember/...) by the layer that implements them; the rest go by directory.
PUBLIC = {
    "error.h": "support", "dtype.h": "ir", "tensor.h": "tensor", "autograd.h": "tensor",
    "grad_mode.h": "tensor", "jit.h": "tensor", "context.h": "engine", "profile.h": "engine",
    "build_info.h": "engine", "tune.h": "engine", "nn.h": "nn", "optim.h": "optim",
    "serialize.h": "nn",
    "ember.h": "nn", "dist.h": "dist", "special_functions.h": "tensor", "padding.h": "tensor",
    "convolution.h": "tensor", "pooling.h": "tensor", "normalization.h": "tensor",
    "indexing.h": "tensor", "sorting.h": "tensor", "shape_ops.h": "tensor",
}
# include/ember/rl/ holds the headers of both src/env and src/ppo; these are env's.
ENV_HEADERS = {"env.h", "random.h", "lunar_lander.h", "vector_env.h", "heuristic.h", "render.h"}


def header_layer(rel):
    """Layer of an include path relative to the source root, or None when not ours."""
    parts = rel.split("/")
    if parts[0] == "include" and len(parts) >= 3:
        sub = parts[2:]
        if len(sub) == 1:
            return PUBLIC.get(sub[0])
        if sub[0] == "rl":
            return "env" if sub[-1] in ENV_HEADERS else "ppo"
        return {"support": "support", "io": "io", "nn": "nn", "optim": "optim",
                "onnx": "onnx"}.get(sub[0])
    if parts[0] == "src" and len(parts) >= 3:
        return parts[1]
    return None


def file_layer(rel):
    parts = rel.split("/")
    if parts[0] == "src":
        return parts[1]
    if parts[0] == "include":
        return header_layer(rel)
    return parts[0]  # apps, tests, bench


def resolve(root, rel_file, inc):
    here = os.path.dirname(rel_file)
    for cand in (os.path.join(here, inc), os.path.join("include", inc), os.path.join("src", inc)):
        if os.path.exists(os.path.join(root, cand)):
            return os.path.normpath(cand)
    return None


def main():
    args = [a for a in sys.argv[1:] if a not in ("-v", "--check")]
    verbose = "-v" in sys.argv
    check = "--check" in sys.argv
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    climbs, private = [], []
    for top in ("src", "include", "apps", "tests", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".h", ".cpp", ".def")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                fl = file_layer(rel)
                if fl not in LEVEL:
                    continue
                with open(os.path.join(root, rel), errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m:
                            continue
                        target = resolve(root, rel, m.group(1))
                        hl = header_layer(target) if target else None
                        if hl not in LEVEL:
                            continue
                        where = f"{rel}:{n}: {m.group(1)}"
                        if LEVEL[hl] > LEVEL[fl]:
                            climbs.append(f"{where}  ({fl} -> {hl})")
                        if target.startswith("src/") and hl != fl:
                            private.append(f"{where}  ({fl} reads {hl}'s private header)")
    if verbose:
        print("\n".join(["climbing:"] + climbs + ["", "private, across layers:"] + private))
    print(f"includes that climb a layer: {len(climbs)}")
    print(f"private headers read across layers: {len(private)}")
    outsiders = [p for p in private if p.split("(")[-1].split()[0] in
                 ("nn", "optim", "io", "onnx", "env", "ppo", "apps", "tests", "bench")]
    print(f"  of which by nn/optim/io/env/ppo/apps/tests/bench: {len(outsiders)}")
    if check and climbs:
        print("\n".join(["climbing:"] + climbs))
        sys.exit(1)


if __name__ == "__main__":
    main()
