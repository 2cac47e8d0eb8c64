"""The study's timing protocol for the Python references (the controlled optimizer step and the
matrix products of `make study`): the same command line and JSON lines as the C++ programs in
bench/study/ (step_args.h, matmul_case.h), so study.py reads every reference the same way."""
import argparse
import json
import statistics
import sys
import time

# The study's three matrix-product shapes: (name, m, k, n, A stored transposed).
MATMUL_CASES = [
    ("(4x128) @ (128x128)", 4, 128, 128, False),
    ("(10000x128) @ (128x128)", 10000, 128, 128, False),
    ("(128x10000) @ (10000x128)", 128, 10000, 128, True),
]


def positive(text):
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {v}")
    return v


def step_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--batch", type=positive, default=10000)
    ap.add_argument("--untimed", type=positive, default=3)
    ap.add_argument("--warmup", type=positive, default=5)
    ap.add_argument("--timed", type=positive, default=10)
    ap.add_argument("--threads", type=positive, default=0, help="0: the library's default")
    a = ap.parse_args()
    if a.batch == 0 or a.timed == 0:
        ap.error("--batch and --timed must be positive")
    return a


def time_steps(one, args):
    """Runs untimed + warmup + timed calls of `one`; returns (timed ms list, first call ms)."""
    ms, first = [], 0.0
    for i in range(args.untimed + args.warmup + args.timed):
        t0 = time.perf_counter()
        one()
        dt = (time.perf_counter() - t0) * 1e3
        if i == 0:
            first = dt
        if i >= args.untimed + args.warmup:
            ms.append(dt)
    return ms, first


def median_call_ms(call, warmup, timed):
    for _ in range(warmup):
        call()
    ms = []
    for _ in range(timed):
        t0 = time.perf_counter()
        call()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def emit(record):
    print(json.dumps(record), flush=True)
    sys.stdout.flush()
