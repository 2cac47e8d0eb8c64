#!/usr/bin/env python3
"""The study's three matrix products in tinygrad (`(a @ b).realize()` on realized float32 inputs,
synchronized; 10 warm-up then `timed` calls): `tinygrad_matmul.py [timed]`, one JSON line per shape.
A benchmark reference, not a test."""
import sys

import numpy as np
from importlib.metadata import version
from tinygrad import Device, Tensor

from protocol import MATMUL_CASES, emit, median_call_ms


def main():
    timed = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rng = np.random.default_rng(0)
    dev = Device[Device.DEFAULT]
    for name, m, k, n, trans_a in MATMUL_CASES:
        a = Tensor(rng.random((k, m) if trans_a else (m, k), dtype=np.float32)).realize()
        b = Tensor(rng.random((k, n), dtype=np.float32)).realize()
        lhs = a.T if trans_a else a

        def call():
            (lhs @ b).realize()
            dev.synchronize()

        ms = median_call_ms(call, 10, timed)
        emit({"kind": "matmul", "impl": "tinygrad", "shape": name, "median_ms": ms,
              "gflops": 2.0 * m * k * n / (ms * 1e-3) * 1e-9, "device": Device.DEFAULT,
              "version": version("tinygrad")})


if __name__ == "__main__":
    main()
