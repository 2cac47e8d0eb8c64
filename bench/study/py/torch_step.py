#!/usr/bin/env python3
"""The study's controlled optimizer step in PyTorch from Python (batch 10,000 by default): the same
protocol and JSON line as bench/study/torch_step.cpp. A benchmark reference, not a test."""
import torch

from protocol import emit, step_args, time_steps
from torch_policy import ActorCritic, PpoStep


def main():
    args = step_args(__doc__)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    ac = ActorCritic()
    step = PpoStep(ac)
    b = args.batch
    obs, act = torch.randn(b, 8), torch.randn(b, 2) * 0.37
    old_logp, adv_raw, ret = torch.randn(b) * 0.1 - 1.0, torch.randn(b), torch.randn(b) * 10.0
    ms, first = time_steps(lambda: step(obs, act, old_logp, adv_raw, ret), args)
    ms_sorted = sorted(ms)
    n = len(ms_sorted)
    median = ms_sorted[n // 2] if n % 2 else 0.5 * (ms_sorted[n // 2 - 1] + ms_sorted[n // 2])
    emit({"kind": "step", "impl": "pytorch", "version": torch.__version__,
          "threads": torch.get_num_threads(), "batch": b, "untimed": args.untimed,
          "warmup": args.warmup, "timed": args.timed, "steps_ms": ms, "median_ms": median,
          "first_step_ms": first})


if __name__ == "__main__":
    main()
