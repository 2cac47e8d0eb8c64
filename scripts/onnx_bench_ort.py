"""ONNX Runtime's side of `make bench-onnx` (scripts/onnx_bench.py): one model, zeros of its declared
input shapes (symbolic dimensions from --dim NAME=SIZE, else 1), default graph optimisations,
intra_op_num_threads = --threads and one inter-op thread; two warm-up runs, then --repeat timed
runs. Prints one JSON line: median and minimum latency in ms. Runs in the project venv (.venv)."""
import argparse
import json
import statistics
import time

import numpy as np
import onnxruntime as ort

TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
         "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(float16)": np.float16}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dim", action="append", default=[], help="NAME=SIZE")
    a = p.parse_args()
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in a.dim)}
    o = ort.SessionOptions()
    o.intra_op_num_threads = a.threads
    o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(a.model, o, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else dims.get(d, 1) for d in i.shape]
        feeds[i.name] = np.zeros(shape, TYPES[i.type])
    for _ in range(2):
        s.run(None, feeds)
    ms = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        s.run(None, feeds)
        ms.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"median_ms": statistics.median(ms), "min_ms": min(ms),
                      "version": ort.__version__}))


if __name__ == "__main__":
    main()
