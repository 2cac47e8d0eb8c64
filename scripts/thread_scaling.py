"""Which kernels lose parallel time at more threads (issue 42): a model's kernels (the DEBUG=2 lines
of `ember onnx run --repeat`) at 1 thread and at --threads T, the runs alternating (1, T, 1, T ...),
ranked by the time they lose, t(T) - t(1) / T, summed over a kernel name's launches; each launch's
time is the lower quartile of its replays (a loaded machine's quieter moments). On an idle machine
a speed-up near 1 marks a kernel that ran on one thread (one unit of work, or under
kMinParallelWork: see its plan with DEBUG=3).
Usage: python3 scripts/thread_scaling.py build/release/apps/ember MODEL.onnx --dim batch=8"""
import argparse
import collections
import os
import re
import subprocess

KERNEL = re.compile(r"\s+kernel (\S+)\s+\S+\s+([\d.]+) us")


def replays(ember, model, threads, dims, repeat):
    """Each replay's launches, [(name, us)], of one `ember onnx run --repeat` at `threads`."""
    cmd = [ember, "onnx", "run", model, "--repeat", str(repeat), "--threads", str(threads)]
    for d in dims:
        cmd += ["--dim", d]
    out = subprocess.run(cmd, env=dict(os.environ, DEBUG="2"), capture_output=True, text=True,
                         check=True)
    runs, cur = [], None
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith("jit: replay"):
            cur = []
            runs.append(cur)
        elif cur is not None and (m := KERNEL.match(line)):
            cur.append((m.group(1), float(m.group(2))))
    return [r for r in runs if r]


def per_launch(runs):
    """The lower quartile of each launch's time over the replays, with its kernel name."""
    n = min(len(r) for r in runs)
    return [(runs[0][i][0], sorted(r[i][1] for r in runs)[len(runs) // 4]) for i in range(n)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ember")
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--dim", action="append", default=[], help="NAME=SIZE")
    p.add_argument("--rounds", type=int, default=3, help="alternating pairs of runs")
    p.add_argument("--repeat", type=int, default=5, help="replays per run")
    p.add_argument("--top", type=int, default=20)
    a = p.parse_args()
    one, many = [], []
    for _ in range(a.rounds):
        one += replays(a.ember, a.model, 1, a.dim, a.repeat)
        many += replays(a.ember, a.model, a.threads, a.dim, a.repeat)
    t1, tn = per_launch(one), per_launch(many)
    if [n for n, _ in t1] != [n for n, _ in tn]:
        raise SystemExit("the launches differ between the thread counts")
    sums = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for (name, x), (_, y) in zip(t1, tn):
        s = sums[name]
        s[0], s[1], s[2] = s[0] + x, s[1] + y, s[2] + 1
    k = a.threads
    total1, totaln = sum(x for _, x in t1), sum(y for _, y in tn)
    print(f"kernel time: {total1 / 1e3:.2f} ms at 1 thread, {totaln / 1e3:.2f} ms at {k}; "
          f"lost {(totaln - total1 / k) / 1e3:.2f} ms")
    print(f"{'kernel':32s} {'launches':>8s} {'1 thread us':>12s} {f'{k} threads us':>13s} "
          f"{'speed-up':>8s} {'lost us':>9s}")
    ranked = sorted(sums.items(), key=lambda kv: kv[1][1] - kv[1][0] / k, reverse=True)
    for name, (x, y, c) in ranked[:a.top]:
        print(f"{name:32s} {c:8d} {x:12.1f} {y:13.1f} {x / y:8.2f} {y - x / k:9.1f}")


if __name__ == "__main__":
    main()
