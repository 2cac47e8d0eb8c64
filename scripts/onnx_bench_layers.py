"""The per-layer and start-up parts of `make bench-onnx` (scripts/onnx_bench.py).

- Layers: `ember onnx run MODEL --profile DIR` times each kernel launch of a run and names the ONNX
  nodes whose ops it computes; each Conv node gets the launches that compute it (its window
  copies, its product, its epilogue with the Relu or Add fused in). A launch that computes several
  Conv nodes (a bottleneck's product with its downsample's output added) counts for the one Conv
  of them with no product (`r_...` kernel) of its own; when that is not one Conv, it is split
  evenly among them and the layers are marked shared. FLOPs: 2 x output elements x the weight's
  elements per output channel (C/group x KH x KW), from the Conv's weight initializer and
  attributes (read with the onnx package in .venv). GFLOPS against the machine's measured peak at
  the active ISA level (`bench_conv_paired peak`, bench/peak.h).
- Reference: each network's largest Conv (most FLOPs), and the Conv where ember spends the most
  time when that is another, timed alone through ember and through oneDNN's convolution
  primitive, paired in one process (`bench_conv_paired conv`).
- Start-up: `ember onnx run --repeat 1` on an empty kernel cache (EMBER_CACHE_DIR, a new folder)
  and then on the cache that run filled: the "first outputs" line (time from the start to the
  first outputs, model load included, and the kernels compiled on the way).

Python standard library only (the weights' shapes come from a .venv process).
"""
import json
import math
import re
import shutil
import subprocess
import tempfile

FIRST_OUTPUTS = re.compile(
    r"first outputs: ([\d.]+) ms after start \(model load ([\d.]+) ms\); (\d+) kernels compiled "
    r"\((\d+) by the compiler, (\d+) from the disk cache\) in ([\d.]+) ms, (\d+) compiler processes")

# Run by .venv's python: each Conv node's weight shape and attributes, as JSON by node name.
CONV_ATTRS = r"""
import json, sys, onnx
m = onnx.load(sys.argv[1])
dims = {t.name: list(t.dims) for t in m.graph.initializer}
out = {}
for n in m.graph.node:
    if n.op_type != "Conv" or len(n.input) < 2 or n.input[1] not in dims:
        continue
    a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
    out[n.name] = {"weight": dims[n.input[1]], "group": a.get("group", 1),
                   "strides": list(a.get("strides", [])), "pads": list(a.get("pads", [])),
                   "dilations": list(a.get("dilations", [])),
                   "auto_pad": a.get("auto_pad", b"NOTSET").decode()}
print(json.dumps(out))
"""


def parse_first_outputs(text):
    """The 'first outputs' line of `ember onnx run --repeat` as a dict, or None."""
    m = FIRST_OUTPUTS.search(text)
    if not m:
        return None
    keys = ("first_ms", "load_ms", "kernels", "by_compiler", "from_disk", "compile_ms", "processes")
    return {k: (float(v) if k.endswith("_ms") else int(v)) for k, v in zip(keys, m.groups())}


def conv_layers(profile, attrs):
    """Each Conv node of an onnx-profile.json record with its shapes, FLOPs and attributed seconds
    (the module comment's rule), in node order."""
    nodes = profile["nodes"]
    shape_of = {v["name"]: v["shape"] for v in profile["inputs"] if "shape" in v}
    for n in nodes:
        for v in n["shapes"]:
            if "shape" in v:
                shape_of[v["name"]] = v["shape"]
    layers = {}
    for n in nodes:
        if n["op_type"] != "Conv" or n["name"] not in attrs or not n["shapes"]:
            continue
        a = attrs[n["name"]]
        out = n["shapes"][0]["shape"]
        layers[n["index"]] = {"name": n["name"], "input": shape_of.get(n["inputs"][0]), "output": out,
                              "weight": a["weight"], "group": a["group"], "strides": a["strides"],
                              "pads": a["pads"], "dilations": a["dilations"], "auto_pad": a["auto_pad"],
                              "flops": 2 * math.prod(out) * math.prod(a["weight"][1:]),
                              "seconds": 0.0, "launches": 0, "shared": False}
    convs_of = [[i for i in l["nodes"] if i in layers] for l in profile["launches"]]
    own_product = {cs[0] for cs, l in zip(convs_of, profile["launches"])
                   if len(cs) == 1 and l["kernel"].startswith("r_")}
    for cs, l in zip(convs_of, profile["launches"]):
        if len(cs) > 1:
            owners = [i for i in cs if i not in own_product]
            if len(owners) != 1:
                for i in cs:
                    layers[i]["shared"] = True
            cs = owners if len(owners) == 1 else cs
        for i in cs:
            layers[i]["seconds"] += l["seconds"] / len(cs)
            layers[i]["launches"] += 1
    return [layers[i] for i in sorted(layers)]


def reference_layers(layers):
    """[(why, layer)]: the largest Conv, then the slowest in ember when that is another."""
    if not layers:
        return []
    big = max(layers, key=lambda l: l["flops"])
    slow = max(layers, key=lambda l: l["seconds"])
    return [("largest", big)] + ([("slowest", slow)] if slow is not big else [])


def reference_args(layer):
    """bench_conv_paired's arguments for a layer, or None when it has no such form (an auto_pad,
    a dilation, unequal strides or pads, a non-2-d window)."""
    s, p, d = layer["strides"] or [1, 1], layer["pads"] or [0] * 4, layer["dilations"] or [1, 1]
    if (layer["auto_pad"] not in ("NOTSET", "") or len(layer["weight"]) != 4 or not layer["input"]
            or len(set(s)) != 1 or len(set(p)) != 1 or set(d) != {1}):
        return None
    dims = lambda v: ",".join(str(x) for x in v)
    return ["--input", dims(layer["input"]), "--weight", dims(layer["weight"]), "--stride",
            str(s[0]), "--pad", str(p[0]), "--group", str(layer["group"])]


def shape_text(layer):
    s, p = layer["strides"] or [1], layer["pads"] or [0]
    g = f" g{layer['group']}" if layer["group"] != 1 else ""
    return (f"{'x'.join(map(str, layer['input'] or ['?']))} * {'x'.join(map(str, layer['weight']))} "
            f"s{s[0]} p{p[0]}{g}")


def layer_table(name, layers, peak, threads):
    """Markdown: one row per Conv, then the total."""
    pct = lambda gf: f"{100 * gf / peak:.0f}%" if peak else "n/a"
    L = [f"### {name}: per-layer convolutions ({threads} thread(s), batch 1)\n",
         f"Peak: {peak:.1f} GFLOPS measured (bench_conv_paired peak). Time: the kernels attributed to "
         "each Conv node in `ember onnx run --profile` (plain runs, mean). *: a launch shared with "
         "another Conv split evenly.\n",
         "| # | Conv | input * weight | output | MFLOP | kernels | ember ms | GFLOPS | % of peak |",
         "|---|---|---|---|---|---|---|---|---|"]
    for i, l in enumerate(layers):
        gf = l["flops"] / l["seconds"] * 1e-9 if l["seconds"] else 0
        L.append(f"| {i} | {l['name']}{'*' if l['shared'] else ''} | {shape_text(l)} | "
                 f"{'x'.join(map(str, l['output']))} | {l['flops'] / 1e6:.1f} | {l['launches']} | "
                 f"{l['seconds'] * 1e3:.3f} | {gf:.1f} | {pct(gf)} |")
    fl, sec = sum(l["flops"] for l in layers), sum(l["seconds"] for l in layers)
    if sec:
        L.append(f"\nAll {len(layers)} Conv layers: {fl / 1e9:.2f} GFLOP in {sec * 1e3:.1f} ms: "
                 f"{fl / sec * 1e-9:.1f} GFLOPS, {pct(fl / sec * 1e-9)} of peak.\n")
    return L


def startup(run, ember, model, dims, threads):
    """Cold then warm kernel cache: two `ember onnx run --repeat 1` in a new EMBER_CACHE_DIR.
    `run(cmd, env)` returns (stdout, stderr, peak KiB) or None (it records the failure)."""
    cache = tempfile.mkdtemp(prefix="ember-bench-cache-")
    cmd = [ember, "onnx", "run", model, "--repeat", "1", "--threads", str(threads)]
    cmd += [x for k, v in dims.items() for x in ("--dim", f"{k}={v}")]
    try:
        got = []
        for _ in ("cold", "warm"):
            r = run(cmd, {"EMBER_CACHE_DIR": cache})
            got.append(parse_first_outputs(r[0]) if r else None)
        return got
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def startup_table(rows, threads):
    f = lambda r, k, fmt: fmt.format(r[k]) if r else "failed"
    L = [f"### Start-up: first outputs, batch 1, {threads} thread(s)\n",
         "From the process's start to the first outputs (the model's load included), on an empty "
         "kernel cache (a new EMBER_CACHE_DIR) and then on the cache that run filled.\n",
         "| network | cold ms | unique kernels | compiled by the compiler | compiler processes | "
         "compiling ms | warm ms | warm: model load ms | warm: from the disk cache |",
         "|---|---|---|---|---|---|---|---|---|"]
    for name, (cold, warm) in rows:
        L.append(f"| {name} | {f(cold, 'first_ms', '{:.0f}')} | {f(cold, 'kernels', '{}')} | "
                 f"{f(cold, 'by_compiler', '{}')} | {f(cold, 'processes', '{}')} | "
                 f"{f(cold, 'compile_ms', '{:.0f}')} | {f(warm, 'first_ms', '{:.0f}')} | "
                 f"{f(warm, 'load_ms', '{:.0f}')} | {f(warm, 'from_disk', '{}')} |")
    return L + [""]


def reference_table(rows, peak, threads):
    pct = lambda ms, fl: f"{100 * fl / (ms * 1e-3) * 1e-9 / peak:.0f}%" if peak and ms else "n/a"
    L = [f"### Convolutions against oneDNN ({threads} thread(s), batch 1)\n",
         "Each network's largest Conv (most FLOPs), and the one where ember spends the most time "
         "when that is another. "
         "bench_conv_paired: the Conv alone through ember (jit replay) and oneDNN's convolution "
         "primitive (its preferred layouts, reordered outside the timing), rounds alternating who "
         "runs first; medians; ratio: the median of the per-round ratios. In-network: the same "
         "layer's kernels in the profile.\n",
         "| network | Conv | MFLOP | ember in network ms | ember alone ms | oneDNN ms | "
         "ember / oneDNN | ember % of peak | oneDNN % of peak | oneDNN implementation |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for name, why, layer, ref in rows:
        if not layer:
            L.append(f"| {name} | no Conv | | | | | | | | |")
            continue
        r = ref or {}
        cell = lambda k, fmt: fmt.format(r[k]) if k in r else "failed"
        L.append(f"| {name} | {why}: {layer['name']}: {shape_text(layer)} | {layer['flops'] / 1e6:.1f} | "
                 f"{layer['seconds'] * 1e3:.3f} | {cell('ember_ms', '{:.3f}')} | "
                 f"{cell('onednn_ms', '{:.3f}')} | {cell('ratio', '{:.2f}x')} | "
                 f"{pct(r.get('ember_ms'), layer['flops'])} | {pct(r.get('onednn_ms'), layer['flops'])} | "
                 f"{r.get('onednn_impl', '')} |")
    return L + [""]


def conv_attrs(venv_python, model, errors):
    p = subprocess.run([venv_python, "-c", CONV_ATTRS, model], capture_output=True, text=True)
    if p.returncode != 0:
        errors.append(f"reading {model}'s Conv weights failed: {p.stderr.strip()[-300:]}")
        return None
    return json.loads(p.stdout)
