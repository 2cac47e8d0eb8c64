#!/usr/bin/env python3
"""The study's controlled optimizer step in tinygrad (TinyJit), with the protocol and JSON line of
torch_step.py. tinygrad's own thread and device settings apply (its CPU backend compiles C with
clang). A benchmark reference, not a test."""
import numpy as np
from importlib.metadata import version
from tinygrad import Device, Tensor

from protocol import emit, step_args, time_steps
from tinygrad_policy import ActorCritic, PpoStep


def main():
    args = step_args(__doc__)
    rng = np.random.default_rng(0)
    b = args.batch
    data = [rng.standard_normal(s).astype(np.float32) * k + c for s, k, c in (
        ((b, 8), 1.0, 0.0), ((b, 2), 0.37, 0.0), ((b,), 0.1, -1.0), ((b,), 1.0, 0.0), ((b,), 10.0, 0.0))]
    tensors = [Tensor(x).realize() for x in data]
    step = PpoStep(ActorCritic(0))
    ms, first = time_steps(lambda: step(*tensors), args)
    ms_sorted = sorted(ms)
    n = len(ms_sorted)
    median = ms_sorted[n // 2] if n % 2 else 0.5 * (ms_sorted[n // 2 - 1] + ms_sorted[n // 2])
    emit({"kind": "step", "impl": "tinygrad", "version": version("tinygrad"),
          "device": Device.DEFAULT, "batch": b, "untimed": args.untimed, "warmup": args.warmup,
          "timed": args.timed, "steps_ms": ms, "median_ms": median, "first_step_ms": first})


if __name__ == "__main__":
    main()
