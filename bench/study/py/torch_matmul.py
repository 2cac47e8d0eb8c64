#!/usr/bin/env python3
"""The study's three matrix products in PyTorch from Python (torch.mm with out=, float32, 10 warm-up
then `timed` calls): `torch_matmul.py [threads] [timed]`, one JSON line per shape, as
bench/study/torch_matmul.cpp. A benchmark reference, not a test."""
import sys

import torch

from protocol import MATMUL_CASES, emit, median_call_ms


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    timed = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    if threads > 0:
        torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, m, k, n, trans_a in MATMUL_CASES:
            a = torch.rand(k, m, generator=gen).t() if trans_a else torch.rand(m, k, generator=gen)
            b = torch.rand(k, n, generator=gen)
            out = torch.empty(m, n)
            ms = median_call_ms(lambda: torch.mm(a, b, out=out), 10, timed)
            emit({"kind": "matmul", "impl": "pytorch", "shape": name,
                  "threads": torch.get_num_threads(), "median_ms": ms,
                  "gflops": 2.0 * m * k * n / (ms * 1e-3) * 1e-9, "version": torch.__version__})


if __name__ == "__main__":
    main()
