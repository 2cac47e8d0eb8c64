"""The Python binding's overhead per call (issue 45): `a + b` on small tensors realized by item(),
and an eager actor layer `tanh(Linear(128, 128)(x))` at batch 4 under no_grad, through ember's
Python package, against the same calls in PyTorch (when installed). The calls alternate in
rounds, so that a burst of load from other processes hits all of them; the table gives each
one's median microseconds per call. The C++ side of the same calls: bench_eager_small.

Usage: PYTHONPATH=build/release/python python3 bench/python_overhead.py [--rounds R] [--calls N]
Not a test; run it on an idle machine.
"""
import argparse
import statistics
import time

import numpy as np

import ember

try:
    import torch
except ImportError:
    torch = None


def per_call_us(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def cases():
    x4 = np.random.default_rng(0).standard_normal((4, 128)).astype(np.float32)
    a, b = ember.ones(4, 4), ember.ones(4, 4)
    layer = ember.nn.Linear(128, 128)
    xe = ember.from_numpy(x4)

    def ember_actor():
        with ember.no_grad():
            return layer(xe).tanh().realize()

    out = {"a + b (4x4), ember": lambda: (a + b).realize(),
           "tanh(Linear(128,128)(x)) batch 4, ember": ember_actor}
    if torch is not None:
        ta, tb = torch.ones(4, 4), torch.ones(4, 4)
        tl = torch.nn.Linear(128, 128)
        tx = torch.from_numpy(x4)

        def torch_actor():
            with torch.no_grad():
                return torch.tanh(tl(tx))

        out["a + b (4x4), torch"] = lambda: ta + tb
        out["tanh(Linear(128,128)(x)) batch 4, torch"] = torch_actor
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--calls", type=int, default=200)
    args = p.parse_args()
    fns = cases()
    for fn in fns.values():  # compile and warm every kernel first
        for _ in range(10):
            fn()
    times = {name: [] for name in fns}
    for _ in range(args.rounds):
        for name, fn in fns.items():
            times[name].append(per_call_us(fn, args.calls))
    width = max(len(n) for n in times)
    print(f"{'call':<{width}}  median us/call")
    for name, ts in times.items():
        print(f"{name:<{width}}  {statistics.median(ts):10.2f}")


if __name__ == "__main__":
    main()
