#!/usr/bin/python3
"""The paired CNN training-step benchmark (`make bench-cnn`): bench_cnn_step (ember eager, ember jit
replay and libtorch in one process, alternating rounds) and cnn_step_torch.py (PyTorch from Python,
Debian's python3-torch) run as process pairs, alternating which runs first, both at ember's thread
count with OpenBLAS held to 1 thread. Per batch (64, 256) it prints the median of the process
medians of each implementation, ember / libtorch (median over the pairs of the in-process ratio)
and ember / PyTorch (the ratio within each pair, then the median). Not a test.
Usage: cnn_step.py BUILD_DIR [--pairs P] [--rounds R] [--reps N]"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def json_lines(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {r["batch"]: r for r in (json.loads(line) for line in out.splitlines() if line.startswith("{"))}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args()
    ember = os.path.join(a.build, "bench", "bench_cnn_step")
    if not os.access(ember, os.X_OK):
        sys.exit(f"cnn_step: {ember} is missing (build the target bench_cnn_step; it needs libtorch-dev)")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    counts = [str(a.rounds), str(a.reps)]
    rows = {}  # batch -> lists of per-process medians and within-pair ratios
    for i in range(max(1, a.pairs)):
        runs = [("ember", [ember] + counts + ["--json"]),
                ("pytorch", [sys.executable, os.path.join(HERE, "cnn_step_torch.py")] + counts + ["--json"])]
        got = {}
        for who, cmd in runs if i % 2 == 0 else reversed(runs):
            if who == "pytorch":
                threads = next(iter(got["ember"].values()))["threads"] if "ember" in got else None
                cmd = cmd + ["--threads", str(threads or os.cpu_count())]
            got[who] = json_lines(cmd, env)
        for batch, e in got["ember"].items():
            t = got["pytorch"][batch]
            r = rows.setdefault(batch, {k: [] for k in ("ember", "jit", "libtorch", "pytorch", "vs_lt", "vs_pt")})
            r["ember"].append(e["ember_ms"])
            r["jit"].append(e["ember_jit_ms"])
            r["libtorch"].append(e["libtorch_ms"])
            r["pytorch"].append(t["pytorch_ms"])
            r["vs_lt"].append(e["ember_ms"] / e["libtorch_ms"])
            r["vs_pt"].append(e["ember_ms"] / t["pytorch_ms"])
    med = statistics.median
    print(f"CNN training step (examples/digits LeNet, Adam): {a.pairs} process pair(s), "
          f"{a.rounds} x {a.reps} timed steps each; medians in ms")
    print("| batch | ember eager | ember jit | libtorch | PyTorch | ember/libtorch | ember/PyTorch | jit/PyTorch |")
    print("|---|---|---|---|---|---|---|---|")
    for batch, r in sorted(rows.items()):
        jit_pt = med(r["jit"]) / med(r["pytorch"])
        print(f"| {batch} | {med(r['ember']):.3f} | {med(r['jit']):.3f} | {med(r['libtorch']):.3f} | "
              f"{med(r['pytorch']):.3f} | {med(r['vs_lt']):.2f}x | {med(r['vs_pt']):.2f}x | {jit_pt:.2f}x |")


if __name__ == "__main__":
    main()
