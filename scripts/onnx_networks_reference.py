"""ONNX Runtime's outputs for the networks scripts/onnx_networks_export.py wrote.

Runs under the project venv (.venv, scripts/python-venv.sh: onnxruntime and onnx from PyPI). For
each OUT/NAME holding model.onnx and inputs.npz it writes ONNX's backend-test layout,
OUT/NAME/test_data_set_0/input_N.pb and output_N.pb (so `ember onnx test OUT/NAME` checks it), and
the outputs again as OUT/NAME/reference.npz, by output name.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import numpy_helper


def reference(d):
    inputs = dict(np.load(os.path.join(d, "inputs.npz")))
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 1  # the machine is shared
    opts.log_severity_level = 3  # errors only: opset-9 graphs warn about every weight input
    sess = onnxruntime.InferenceSession(os.path.join(d, "model.onnx"), opts,
                                        providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outputs = sess.run(names, inputs)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    # input_N.pb is the N-th graph input without an initializer (the backend runner's order).
    graph = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False).graph
    defaults = {i.name for i in graph.initializer}
    formal = [i.name for i in graph.input if i.name not in defaults]
    for i, name in enumerate(formal):
        write(numpy_helper.from_array(inputs[name], name), os.path.join(data, f"input_{i}.pb"))
    for i, (name, value) in enumerate(zip(names, outputs)):
        write(numpy_helper.from_array(value, name), os.path.join(data, f"output_{i}.pb"))
    np.savez(os.path.join(d, "reference.npz"), **dict(zip(names, outputs)))


def write(tensor, path):
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+", help="network folders (model.onnx, inputs.npz)")
    for d in p.parse_args().dirs:
        reference(d)
        print(f"reference {os.path.basename(d)} (onnxruntime {onnxruntime.__version__})",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
