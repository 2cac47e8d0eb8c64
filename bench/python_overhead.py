"""The Python binding's overhead per call (issue 45), beside the same calls in C++ and PyTorch:

  a + b (4x4)                 (a + b).realize() on two 4x4 float32 tensors (torch: a + b);
  actor forward batch 4, jit  the study's actor (8 -> 128 x4, tanh -> 2) under ember.jit on a
                              [4, 8] input, no_grad (torch: the same nn.Sequential, eager);
  ppo step batch B, jit       the training step `ember train` runs (the C++ PpoLearner's jitted
                              step) on B transitions, its metrics read with item().

The Python calls alternate in rounds, so that a burst of load from other processes hits all of
them; each cell is the median over rounds of the microseconds per call. The C++ column comes from
bench_python_pairs (bench/python_pairs.cpp: the same calls and protocol, one process, run after
the Python rounds); "Python / C++" is the binding's cost as a ratio.

Usage: PYTHONPATH=build/release/python python3 bench/python_overhead.py
           [--rounds R] [--calls N] [--step-calls N] [--batch B] [--cpp PATH] [--no-torch]
Not a test; run it on an idle machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

import ember
from ember import _ember, nn

try:
    import torch
except ImportError:
    torch = None

DEFAULT_CPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "release",
                           "bench", "bench_python_pairs")


def per_call_us(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def actor(lib):
    """8 -> 128, three times tanh -> 128, tanh -> 2 (bench/ppo_like_step.h's mlp(2))."""
    layers = [lib.nn.Linear(8, 128)]
    for _ in range(3):
        layers += [lib.nn.Tanh(), lib.nn.Linear(128, 128)]
    layers += [lib.nn.Tanh(), lib.nn.Linear(128, 2)]
    return lib.nn.Sequential(*layers)


def ember_cases(batch):
    """(name, fn, calls key) of each ember-Python case."""
    ember.manual_seed(0)
    a, b = ember.ones(4, 4).realize(), ember.ones(4, 4).realize()
    net = actor(ember)
    x = ember.randn(4, 8).realize()
    forward = ember.jit(lambda t: net(t))

    def actor_call():
        with ember.no_grad():
            forward(x)

    ember.manual_seed(0)  # as bench_python_pairs and bench/study/ember_step.cpp
    step = _ember._ppo._LearnerStep()
    inputs = [ember.randn(batch, 8), ember.randn(batch, 2) * 0.37, ember.randn(batch) * 0.1 - 1.0,
              ember.randn(batch), ember.randn(batch) * 10.0]
    for t in inputs:
        t.realize()

    def step_call():
        for t in step(inputs):
            t.item()

    return [("a + b (4x4)", lambda: (a + b).realize(), "calls"),
            ("actor forward batch 4, jit", actor_call, "calls"),
            (f"ppo step batch {batch}, jit", step_call, "step_calls")]


def torch_cases():
    ta, tb = torch.ones(4, 4), torch.ones(4, 4)
    net = actor(torch)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))

    def actor_call():
        with torch.no_grad():
            net(x)

    return {"a + b (4x4)": lambda: ta + tb, "actor forward batch 4, jit": actor_call}


def cpp_times(path, args):
    """{case: us per call} from bench_python_pairs."""
    out = subprocess.run([path, "--rounds", str(args.rounds), "--calls", str(args.calls),
                          "--step-calls", str(args.step_calls), "--batch", str(args.batch)],
                         check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {r["case"]: r["us_per_call"] for r in rows}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--calls", type=int, default=200, help="calls per round, small cases")
    p.add_argument("--step-calls", type=int, default=3, help="calls per round, the PPO step")
    p.add_argument("--batch", type=int, default=10000, help="transitions in the PPO step")
    p.add_argument("--cpp", default=DEFAULT_CPP, help="the bench_python_pairs binary")
    p.add_argument("--no-torch", action="store_true")
    args = p.parse_args()
    cases = ember_cases(args.batch)
    tcases = torch_cases() if torch is not None and not args.no_torch else {}
    fns = [(name, fn, getattr(args, key)) for name, fn, key in cases]
    fns += [(name + " [torch]", fn, args.calls) for name, fn in tcases.items()]
    for _, fn, _ in fns:  # compile, capture and warm every call first
        for _ in range(10):
            fn()
    times = {name: [] for name, _, _ in fns}
    for _ in range(args.rounds):
        for name, fn, calls in fns:
            times[name].append(per_call_us(fn, calls))
    median = {name: statistics.median(ts) for name, ts in times.items()}
    cpp = cpp_times(args.cpp, args) if os.path.exists(args.cpp) else {}
    if not cpp:
        print(f"(no C++ column: {args.cpp} not found; build the target bench_python_pairs)")
    width = max(len(name) for name, _, _ in cases)
    print(f"{'call':<{width}}  {'ember Python us':>15}  {'ember C++ us':>12}  "
          f"{'Python / C++':>12}  {'PyTorch us':>10}")
    for name, _, _ in cases:
        py, c = median[name], cpp.get(name)
        t = median.get(name + " [torch]")
        print(f"{name:<{width}}  {py:15.2f}  {'-' if c is None else f'{c:.2f}':>12}  "
              f"{'-' if c is None else f'{py / c:.3f}':>12}  "
              f"{'-' if t is None else f'{t:.2f}':>10}")


if __name__ == "__main__":
    main()
