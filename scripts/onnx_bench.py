#!/usr/bin/python3
"""Real networks on ember against ONNX Runtime, timed (`make bench-onnx`).

1. Exports the benchmark set with Debian's torch (scripts/onnx_networks_export.py --set bench
   --batch-axis: ResNet-18 and -50, MobileNetV2 and V3-small, SqueezeNet 1.1 at 224x224, a
   BERT-mini encoder at sequence length 64; fixed-seed random weights, nothing downloaded), once.
2. For each network, batch size (1 and 8) and thread count (1 and 2): --pairs process pairs of
   `ember onnx run MODEL --repeat N --threads T --dim batch=B` and ONNX Runtime
   (scripts/onnx_bench_ort.py in .venv: default graph optimisations, intra_op_num_threads = T),
   alternating who runs first. Both get zeros of the declared input shapes. Each process's peak
   resident memory comes from GNU time (/usr/bin/time -f %M).
3. At batch 1 and the first thread count (scripts/onnx_bench_layers.py says how): the start-up of
   each network on an empty and on a warm kernel cache; each network's largest convolution alone,
   ember against oneDNN (bench/bench_conv_paired); and for the --layers networks (ResNet-50) each
   convolution's time in the network, GFLOPS and share of the measured peak.
4. Writes OUT/report.md (median latency of the process medians, the median of the within-pair
   ratios ember / ONNX Runtime, throughput, peak memory, the geometric mean of the ratios per
   thread count; then step 3's tables) and OUT/raw.jsonl.

Python standard library only; exits 1 when a measurement failed (the report names it).
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import onnx_bench_layers as layers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETWORKS = {  # name: (dims at batch B, throughput batch)
    "resnet18_224": (lambda b: {"batch": b}, 8),
    "resnet50": (lambda b: {"batch": b}, 8),
    "mobilenet_v2_224": (lambda b: {"batch": b}, 8),
    "mobilenet_v3_small": (lambda b: {"batch": b}, 8),
    "squeezenet1_1_224": (lambda b: {"batch": b}, 8),
    "bert_mini": (lambda b: {"batch": b, "sequence": 64}, 8),
}
DNNL_ISA = {"avx512": "AVX512_CORE", "avx2": "AVX2", "sse2": "SSE41"}  # as bench/run.sh
EMBER_LINE = re.compile(r": (\d+) runs \(([^,]+), (\d+) threads\): median ([\d.]+) ms, min ([\d.]+) ms")


class Bench:
    def __init__(self, a):
        self.a = a
        self.ember = os.path.join(os.path.abspath(a.build), "apps", "ember")
        self.venv_python = os.path.join(ROOT, ".venv", "bin", "python")
        self.conv_bench = os.path.join(os.path.abspath(a.build), "bench", "bench_conv_paired")
        self.raw, self.errors = [], []

    def timed_process(self, cmd, env=None):
        """Runs cmd under GNU time; returns (stdout, stderr without time's line, peak KiB) or None."""
        with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
            full = ["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd
            try:
                p = subprocess.run(full, capture_output=True, text=True, timeout=self.a.timeout,
                                   env=dict(os.environ, **(env or {})))
            except subprocess.TimeoutExpired:
                self.errors.append(f"`{' '.join(cmd)}` timed out after {self.a.timeout} s")
                return None
            if p.returncode != 0:
                tail = (p.stderr.strip().splitlines() or [""])[-1]
                self.errors.append(f"`{' '.join(cmd)}` failed (exit {p.returncode}): {tail}")
                return None
            return p.stdout, p.stderr, int(rss.read().strip().splitlines()[-1])

    def run_ember(self, model, dims, threads):
        cmd = [self.ember, "onnx", "run", model, "--repeat", str(self.a.repeat), "--threads",
               str(threads)] + [x for k, v in dims.items() for x in ("--dim", f"{k}={v}")]
        r = self.timed_process(cmd)
        if not r:
            return None
        m = EMBER_LINE.search(r[0])
        if not m:
            self.errors.append(f"`{' '.join(cmd)}` printed no latency line")
            return None
        return {"impl": "ember", "mode": m[2], "median_ms": float(m[4]), "min_ms": float(m[5]),
                "peak_kib": r[2]}

    def run_ort(self, model, dims, threads):
        cmd = [self.venv_python, os.path.join(ROOT, "scripts", "onnx_bench_ort.py"), model,
               "--repeat", str(self.a.repeat), "--threads", str(threads)]
        cmd += [x for k, v in dims.items() for x in ("--dim", f"{k}={v}")]
        r = self.timed_process(cmd)
        if not r:
            return None
        row = json.loads(r[0].strip().splitlines()[-1])
        return {"impl": "onnxruntime", **row, "peak_kib": r[2]}

    def conv_bench_json(self, args, threads):
        """bench_conv_paired's JSON line (oneDNN held to $EMBER_ISA's level), or None."""
        isa = os.environ.get("EMBER_ISA", "")
        env = {"DNNL_MAX_CPU_ISA": DNNL_ISA[isa]} if isa in DNNL_ISA else {}
        r = self.timed_process([self.conv_bench] + args + ["--threads", str(threads)], env)
        return json.loads(r[0].strip().splitlines()[-1]) if r else None

    def profile(self, model, dims, threads):
        """The onnx-profile.json record of `ember onnx run --profile` (--repeat runs), or None."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "profile")
            cmd = [self.ember, "onnx", "run", model, "--repeat", str(self.a.repeat), "--threads",
                   str(threads), "--profile", out] + [x for k, v in dims.items() for x in ("--dim", f"{k}={v}")]
            if not self.timed_process(cmd):
                return None
            with open(os.path.join(out, "onnx-profile.json")) as f:
                return json.load(f)

    def details(self, models):
        """Step 3 of the file comment: the report's lines."""
        t, starts, refs, tables = self.a.threads[0], [], [], []
        have = os.access(self.conv_bench, os.X_OK)
        if not have:
            self.errors.append(f"no {self.conv_bench}: `make bench-onnx` builds it (oneDNN, "
                               "EMBER_BUILD_BENCH): no peak, per-layer or oneDNN rows")
        # The best of three probes: on a loaded machine one reads from 60% to 100% of another.
        probes = [self.conv_bench_json(["peak"], t) for _ in range(3)] if have else []
        peak = max((p["peak_gflops"] for p in probes if p), default=None)
        for name in self.names():
            dims, model = NETWORKS[name][0](1), os.path.join(models, name, "model.onnx")
            print(f"[bench-onnx] {name}: start-up, layers, largest convolution", file=sys.stderr,
                  flush=True)
            starts.append((name, layers.startup(self.timed_process, self.ember, model, dims, t)))
            attrs = layers.conv_attrs(self.venv_python, model, self.errors)
            prof = self.profile(model, dims, t) if attrs and peak else None
            found = layers.conv_layers(prof, attrs) if prof else []
            if name in (self.a.layers or []) and found:
                tables += layers.layer_table(name, found, peak, t)
            picked = layers.reference_layers(found)
            for why, layer in picked:
                args = layers.reference_args(layer)
                ref = self.conv_bench_json(["conv"] + args, t) if args else None
                refs.append((name, why, layer, ref))
                self.raw.append({"network": name, "threads": t, "batch": 1, "conv": why,
                                 "layer": layer, "reference": ref, "peak_gflops": peak})
            if not picked:
                refs.append((name, "", None, None))
            self.raw.append({"network": name, "threads": t, "batch": 1, "startup": starts[-1][1],
                             "layers": found if name in (self.a.layers or []) else None})
        return (layers.startup_table(starts, t) + (layers.reference_table(refs, peak, t) if peak else [])
                + tables)

    def export(self, models):
        todo = [n for n in self.names() if not os.path.isfile(os.path.join(models, n, "model.onnx"))]
        if not todo:
            return
        cmd = ["/usr/bin/python3", os.path.join(ROOT, "scripts", "onnx_networks_export.py"), "--out",
               models, "--set", "bench", "--batch-axis", "--only"] + todo
        print("[bench-onnx] exporting " + ", ".join(todo), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True)

    def names(self):
        return [n for n in NETWORKS if not self.a.only or n in self.a.only]

    def measure(self, models):
        rows = []
        for name in self.names():
            dims_of, big = NETWORKS[name]
            model = os.path.join(models, name, "model.onnx")
            for batch in (1, big):
                for threads in self.a.threads:
                    dims = dims_of(batch)
                    print(f"[bench-onnx] {name} batch {batch}, {threads} threads", file=sys.stderr,
                          flush=True)
                    got = {"ember": [], "onnxruntime": []}
                    ratios = []
                    for p in range(self.a.pairs):
                        pair = {}
                        order = (self.run_ember, self.run_ort) if p % 2 == 0 else (self.run_ort, self.run_ember)
                        for fn in order:
                            r = fn(model, dims, threads)
                            if r:
                                r.update(network=name, batch=batch, threads=threads, pair=p)
                                self.raw.append(r)
                                pair[r["impl"]] = r
                                got[r["impl"]].append(r)
                        if len(pair) == 2:
                            ratios.append(pair["ember"]["median_ms"] / pair["onnxruntime"]["median_ms"])
                    rows.append(self.summary(name, batch, threads, got, ratios))
        return rows

    @staticmethod
    def summary(name, batch, threads, got, ratios):
        med = lambda rs, k: statistics.median(r[k] for r in rs) if rs else None
        return {"network": name, "batch": batch, "threads": threads,
                "ember_ms": med(got["ember"], "median_ms"), "ort_ms": med(got["onnxruntime"], "median_ms"),
                "ratio": statistics.median(ratios) if ratios else None,
                "ember_mib": med(got["ember"], "peak_kib"), "ort_mib": med(got["onnxruntime"], "peak_kib"),
                "mode": got["ember"][0]["mode"] if got["ember"] else "failed"}

    def report(self, rows, details=()):
        f = lambda v, fmt: fmt.format(v) if v is not None else "failed"
        L = ["# Real networks: ember against ONNX Runtime\n",
             f"Written by scripts/onnx_bench.py: {self.a.pairs} process pair(s) per row, alternating who runs "
             f"first; each process one warm-up (ember: and a jit capture), then {self.a.repeat} timed runs, "
             "median. Ratio: ember / ONNX Runtime within each pair, then the median. Zeros as inputs. "
             "Peak memory: the process's maximum resident set (GNU time).\n",
             "| network | batch | threads | ember ms | ONNX Runtime ms | ember / ORT | ember images/s | "
             "ember MiB | ORT MiB | ember runs |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            tput = f"{r['batch'] * 1e3 / r['ember_ms']:.1f}" if r["ember_ms"] else "failed"
            L.append(f"| {r['network']} | {r['batch']} | {r['threads']} | {f(r['ember_ms'], '{:.3f}')} | "
                     f"{f(r['ort_ms'], '{:.3f}')} | {f(r['ratio'], '{:.2f}x')} | {tput} | "
                     f"{f(r['ember_mib'] and r['ember_mib'] / 1024, '{:.0f}')} | "
                     f"{f(r['ort_mib'] and r['ort_mib'] / 1024, '{:.0f}')} | {r['mode']} |")
        L.append("")
        for t in self.a.threads:
            rs = [r["ratio"] for r in rows if r["threads"] == t and r["ratio"]]
            if rs:
                gm = math.exp(sum(math.log(x) for x in rs) / len(rs))
                L.append(f"- {t} thread(s): geometric mean of ember / ONNX Runtime {gm:.2f}x over "
                         f"{len(rs)} rows; worst {max(rs):.2f}x")
        L += [""] + list(details)
        for e in self.errors:
            L.append(f"- FAILED: {e}")
        return "\n".join(L) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build/release")
    p.add_argument("--out", default="build/release/onnx-bench")
    p.add_argument("--repeat", type=int, default=20, help="timed runs per process")
    p.add_argument("--pairs", type=int, default=3, help="process pairs per row")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--only", nargs="*", help="only these networks: " + ", ".join(NETWORKS))
    p.add_argument("--timeout", type=int, default=900, help="seconds per process")
    p.add_argument("--layers", nargs="*", default=["resnet50"],
                   help="networks whose per-layer convolution table the report shows")
    p.add_argument("--no-details", action="store_true",
                   help="only the latency table: no start-up, largest-convolution or layer rows")
    a = p.parse_args()
    a.threads = [int(t) for t in a.threads.split(",") if t]
    for n in a.only or []:
        if n not in NETWORKS:
            p.error(f"unknown network {n} (the set: {', '.join(NETWORKS)})")
    b = Bench(a)
    if not os.access(b.ember, os.X_OK):
        sys.exit(f"bench-onnx: build {b.ember} first")
    if not os.access(b.venv_python, os.X_OK):
        sys.exit("bench-onnx: no .venv with onnxruntime (scripts/python-venv.sh makes it)")
    models = os.path.join(a.out, "models")
    os.makedirs(models, exist_ok=True)
    b.export(models)
    rows = b.measure(models)
    details = [] if a.no_details else b.details(models)
    for name, text in (("raw.jsonl", "".join(json.dumps(r) + "\n" for r in b.raw)),
                       ("report.md", b.report(rows, details))):
        fd, tmp = tempfile.mkstemp(dir=a.out, prefix=f".{name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(a.out, name))
    print(open(os.path.join(a.out, "report.md")).read())
    return 1 if b.errors else 0


if __name__ == "__main__":
    sys.exit(main())
