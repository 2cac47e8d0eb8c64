#!/usr/bin/python3
"""The CNN training step of bench/cnn_step.cpp in PyTorch from Python (Debian's python3-torch, the
system interpreter): examples/digits' LeNet-style model (digits_torch.lenet) on random 8x8 images,
forward, cross-entropy, backward and an Adam step (lr 2e-3), at batch 64 and 256; 2 warm-up steps,
then ROUNDS x REPS timed steps. Prints the median per batch, or with --json one JSON line per batch
(bench/cnn_step.py pairs it with bench_cnn_step). A benchmark reference, not a test.
Usage: cnn_step_torch.py [ROUNDS [REPS]] [--threads N] [--json]"""
import argparse
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "examples", "digits"), os.path.join(HERE, "study", "py")]
from digits_torch import lenet  # noqa: E402  (the example's model, not a copy)
from protocol import emit, median_call_ms  # noqa: E402  (the study's timing protocol)


def median_step_ms(batch, steps):
    """The median of `steps` timed training steps at `batch`, after 2 warm-up steps."""
    torch.manual_seed(0)
    net = lenet()
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    x = torch.randn(batch, 1, 8, 8)
    y = torch.arange(batch) % 10

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return median_call_ms(step, 2, steps)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rounds", type=int, nargs="?", default=3)
    p.add_argument("reps", type=int, nargs="?", default=10)
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (default: PyTorch's)")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    for batch in (64, 256):
        steps = max(1, a.rounds) * max(1, a.reps)
        med = median_step_ms(batch, steps)
        if a.json:
            emit({"kind": "cnn_step", "impl": "pytorch", "version": torch.__version__, "batch": batch,
                  "threads": torch.get_num_threads(), "steps": steps, "pytorch_ms": med})
        else:
            print(f"PyTorch {torch.__version__}, batch {batch}, {torch.get_num_threads()} threads: "
                  f"{med:.3f} ms (median of {steps} steps)")


if __name__ == "__main__":
    main()
