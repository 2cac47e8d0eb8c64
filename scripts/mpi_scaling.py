#!/usr/bin/python3
"""Data-parallel PPO measured on one machine and modelled on 64 nodes (`make bench-mpi`; issue 47).

1. --pairs pairs of `ember train` runs over the same global epoch (--envs-per-rank x 2 envs,
   --steps-per-env vector steps, 2 minibatches per pass): 1 rank x 2 threads (one process, 2x the
   envs and the minibatch) against 2 ranks x 1 thread (`mpirun -np 2`), alternating which runs
   first so that the machine's noise hits both. Each run's epochs.jsonl gives, per epoch after
   the first (which compiles the kernels): env steps per second (the epoch's transitions over
   every rank / epoch_s), the update's time, and the allreduce's and optimizer step's time per
   optimizer step (update_allreduce_s and update_steps_s over optimizer_steps).
2. bench_allreduce (bench/allreduce.cpp) on 1 and 2 ranks: seconds per all_reduce of float32
   buffers from 4 bytes to 4 MiB, the flat gradient's size among them.
3. Fits t = alpha + bytes / bandwidth to the 2-rank times (the fastest rounds; least squares of
   the relative errors) and writes the model of README "Beyond one machine": per-rank efficiency
   1 / (1 + t_ar(p) / (M (k_c / passes + c))), with M the rows of a rank's minibatch, k_c the
   collection's seconds per transition and c the optimizer step's compute seconds per row, both
   measured here; t_ar(p) for a ring all-reduce over an assumed network (--latency-us, --gbit),
   since one machine measures only shared memory.

Prints the report (markdown) and writes it with the raw records under --out. Python standard
library only; exits 1 when a run failed.
"""
import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
          "--mca", "btl_vader_single_copy_mechanism", "none"]
OBS, ACT, METRICS = 8, 2, 6  # LunarLanderContinuous; the flat buffer's loss terms


def flat_gradient_elements(hidden, layers):
    """Elements of the flat buffer one step all-reduces: actor and critic MLPs, log_std, metrics."""
    def mlp(n_in, n_out):
        sizes = [n_in] + [hidden] * layers + [n_out]
        return sum(a * b + b for a, b in zip(sizes, sizes[1:]))
    return mlp(OBS, ACT) + ACT + mlp(OBS, 1) + METRICS


def epoch_rows(records):
    """Per epoch after the first: the quantities of the table (dicts), from epochs.jsonl records."""
    rows, before = [], 0
    for r in records:
        new, before = r["transitions"] - before, r["transitions"]
        steps = r.get("optimizer_steps") or 0
        if r["epoch"] == 0 or steps == 0:
            continue
        ranks = r.get("ranks") or {"update_s": [r["update_s"]], "update_steps_s":
                                   [r["update_steps_s"]], "allreduce_s": [r["update_allreduce_s"]]}
        allreduce, step = ranks["allreduce_s"], ranks["update_steps_s"]
        rows.append({
            "world_size": r.get("world_size", 1),
            "steps_per_s": new / r["epoch_s"],
            "collect_s": r["collect_s"],
            "update_s": max(ranks["update_s"]),
            "step_per_step_s": r["update_steps_s"] / steps,
            # The rank that reaches the allreduce last waits least: its time is the transfer's;
            # the first rank's adds the wait for the slower one.
            "allreduce_min_per_step_s": min(allreduce) / steps,
            "allreduce_max_per_step_s": max(allreduce) / steps,
            "compute_per_step_s": statistics.mean(s - a for s, a in zip(step, allreduce)) / steps,
            "transitions": new,
            "optimizer_steps": steps,
        })
    return rows


def fit_latency_bandwidth(points):
    """t = alpha + bytes / bandwidth over (bytes, seconds), least squares of the relative errors
    (weights 1 / t^2: a 4 MiB point does not drown the latency); returns (alpha, bytes/s)."""
    w = [1 / t ** 2 for _, t in points]
    sw = sum(w)
    sb = sum(wi * b for wi, (b, _) in zip(w, points))
    sbb = sum(wi * b * b for wi, (b, _) in zip(w, points))
    st = sum(wi * t for wi, (_, t) in zip(w, points))
    sbt = sum(wi * b * t for wi, (b, t) in zip(w, points))
    slope = (sw * sbt - sb * st) / (sw * sbb - sb * sb)
    return (st - slope * sb) / sw, (1 / slope if slope > 0 else float("inf"))


def ring_allreduce_s(p, nbytes, latency_s, bytes_per_s):
    """Ring all-reduce (reduce-scatter then all-gather): 2 (p-1) messages of nbytes / p each."""
    if p == 1:
        return 0.0
    return 2 * (p - 1) * latency_s + 2 * (p - 1) / p * nbytes / bytes_per_s


def efficiency(t_ar, rows, k_collect, c_row, passes):
    """Per-rank efficiency of weak scaling: an epoch's compute over compute + allreduce."""
    return 1 / (1 + t_ar / (rows * (k_collect / passes + c_row)))


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"mpi_scaling: `{shlex.join(cmd)}` timed out after {timeout:g} s")
    if p.returncode != 0:
        sys.exit(f"mpi_scaling: `{shlex.join(cmd)}` failed (exit {p.returncode}):\n"
                 f"{p.stderr[-2000:]}")
    return p.stdout


def train(a, ember, ranks, out):
    envs = a.envs_per_rank * (2 if ranks == 1 else 1)
    minibatch = envs * a.steps_per_env // 2
    global_epoch = 2 * a.envs_per_rank * a.steps_per_env
    cmd = [ember, "train", "--envs", str(envs), "--steps-per-env", str(a.steps_per_env),
           "--minibatch", str(minibatch), "--passes", str(a.passes),
           "--threads", str(2 // ranks), "--env-threads", str(2 // ranks),
           "--max-transitions", str(a.epochs * global_epoch), "--eval-every", "100000",
           "--eval-envs", "1", "--eval-episodes-per-env", "1", "--final-eval-episodes-per-env",
           "1", "--checkpoint-every", "0", "--progress", "none", "--seed", "1", "--out", out]
    if ranks > 1:
        cmd = MPIRUN + ["-np", str(ranks)] + cmd
    run(cmd, a.timeout)
    with open(os.path.join(out, "epochs.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def allreduce_bench(a, ranks, sizes):
    cmd = [os.path.join(a.build, "bench", "bench_allreduce"), *map(str, sizes)]
    if ranks > 1:
        cmd = MPIRUN + ["-np", str(ranks)] + cmd
    return [json.loads(line) for line in run(cmd, a.timeout).splitlines() if line.startswith("{")]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def report(a, runs, bench, flat_elements):
    by = {1: [r for rs in runs[1] for r in rs], 2: [r for rs in runs[2] for r in rs]}
    out = ["| | 1 rank x 2 threads | 2 ranks x 1 thread |", "|---|---:|---:|"]
    for label, key, scale, fmt in [
            ("env steps per second (global)", "steps_per_s", 1, "{:,.0f}"),
            ("collection per epoch (s)", "collect_s", 1, "{:.3f}"),
            ("update per epoch (s, slowest rank)", "update_s", 1, "{:.3f}"),
            ("optimizer step, per step (ms)", "step_per_step_s", 1e3, "{:.2f}"),
            ("its compute (step - allreduce), per step (ms)", "compute_per_step_s", 1e3, "{:.2f}"),
            ("allreduce, per step, last rank in (ms)", "allreduce_min_per_step_s", 1e3, "{:.3f}"),
            ("allreduce, per step, first rank in (ms)", "allreduce_max_per_step_s", 1e3,
             "{:.3f}")]:
        out.append(f"| {label} | " + " | ".join(fmt.format(med(by[n], key) * scale) for n in (1, 2))
                   + " |")
    two = by[2]
    nbytes = 4 * flat_elements
    out += ["", f"Medians over {len(by[1])} and {len(two)} epochs ({a.pairs} alternating pairs of "
            f"{a.epochs}-epoch runs, the first epoch of each left out); global epoch "
            f"{two[0]['transitions']:,} transitions, {two[0]['optimizer_steps']} optimizer steps. "
            "The allreduce's time in training includes waiting for the other rank.",
            "", f"all_reduce alone (bench_allreduce, float32, s per call; flat gradient "
            f"{flat_elements:,} elements = {nbytes:,} bytes):", "",
            "| bytes | 1 rank, median | 2 ranks, median | 2 ranks, fastest round |",
            "|---:|---:|---:|---:|"]
    one = {r["bytes"]: r["median_s"] for r in bench[1]}
    for r in bench[2]:
        out.append(f"| {r['bytes']:,} | {one.get(r['bytes'], float('nan')) * 1e6:.2f} us | "
                   f"{r['median_s'] * 1e6:.2f} us | {r['min_s'] * 1e6:.2f} us |")
    alpha, bw = fit_latency_bandwidth([(r["bytes"], r["min_s"]) for r in bench[2]])
    t_flat = next(r["median_s"] for r in bench[2] if r["bytes"] == nbytes)
    # The model's inputs from the 2-rank runs: per transition collection, per row step compute.
    rows_per_rank = two[0]["transitions"] // 2 // 2  # 2 ranks, 2 minibatches per pass
    k_c = med(two, "collect_s") / (two[0]["transitions"] / 2)
    c = med(two, "compute_per_step_s") / rows_per_rank
    lat, net_bw = a.latency_us * 1e-6, a.gbit * 1e9 / 8
    out += ["", f"Fit on 2 ranks (shared memory, fastest rounds): t = {alpha * 1e6:.2f} us + "
            f"bytes / {bw / 1e9:.2f} GB/s. The flat gradient's all_reduce (median) "
            f"{t_flat * 1e3:.3f} ms = {100 * t_flat / med(two, 'compute_per_step_s'):.2f}% of the "
            f"2-rank step's compute ({med(two, 'compute_per_step_s') * 1e3:.2f} ms): the most an "
            "overlap with the backward pass could hide.",
            f"Measured per rank (1 thread): collection {k_c * 1e6:.1f} us per transition, the "
            f"step's compute {c * 1e6:.2f} us per minibatch row; {a.passes} passes.", "",
            f"Model over an ASSUMED network ({a.gbit:g} Gb/s, {a.latency_us:g} us per message; "
            "ring all-reduce, every hop a network message), per-rank minibatch M; threads: "
            "compute and collection divided by the threads (linear scaling assumed):", "",
            f"| ranks x threads | t_ar (ms) | efficiency at M = {rows_per_rank:,} | M for 90% | "
            "global minibatch for 90% | envs for 90% |", "|---|---:|---:|---:|---:|---:|"]
    n = a.cores_per_node
    for p, threads in ((2, 1), (64, 1), (64, n), (64 * n, 1)):
        t = ring_allreduce_s(p, nbytes, lat, net_bw)
        kc_t, c_t = k_c / threads, c / threads
        e = efficiency(t, rows_per_rank, kc_t, c_t, a.passes)
        m90 = max(1, math.ceil(9 * t / (kc_t / a.passes + c_t)))  # t_ar = M (...) / 9
        # 2 minibatches of M per epoch; at least one env per thread.
        envs = max(threads, math.ceil(2 * m90 / a.steps_per_env))
        out.append(f"| {p} x {threads} | {t * 1e3:.3f} | {100 * e:.1f}% | {m90:,} | "
                   f"{p * m90:,} | {p * envs:,} |")
    out += ["", f"(64 nodes of {n} cores, assumed: one rank of {n} threads per node, or one "
            "1-thread rank per core.)"]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "release", "bench-mpi"))
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--envs-per-rank", type=int, default=4)
    ap.add_argument("--steps-per-env", type=int, default=2500)
    ap.add_argument("--passes", type=int, default=20)
    ap.add_argument("--latency-us", type=float, default=5.0, help="assumed network latency")
    ap.add_argument("--gbit", type=float, default=100.0, help="assumed network bandwidth")
    ap.add_argument("--cores-per-node", type=int, default=32, help="assumed")
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    ember = os.path.join(a.build, "apps", "ember")
    os.makedirs(a.out, exist_ok=True)
    runs, raw, load0 = {1: [], 2: []}, [], loadavg()
    for i in range(a.pairs):
        for ranks in ((1, 2) if i % 2 == 0 else (2, 1)):
            out = os.path.join(a.out, f"pair{i}-ranks{ranks}")
            subprocess.run(["rm", "-rf", out], check=True)
            records = train(a, ember, ranks, out)
            raw.append({"pair": i, "ranks": ranks, "records": records})
            runs[ranks].append(epoch_rows(records))
    flat = flat_gradient_elements(128, 4)
    sizes = sorted({1, 256, 4096, 16384, 65536, flat, 262144, 1 << 20})
    bench = {n: allreduce_bench(a, n, sizes) for n in (1, 2)}
    text = report(a, runs, bench, flat) + f"\n\nLoad average: {load0} before, {loadavg()} after."
    with open(os.path.join(a.out, "raw.json"), "w") as f:
        json.dump({"runs": raw, "allreduce": bench}, f)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
