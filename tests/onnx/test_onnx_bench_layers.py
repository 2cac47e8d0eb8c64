"""scripts/onnx_bench_layers.py on hand-built profiles: the per-layer attribution of launches to
Conv nodes, FLOPs, bench_conv_paired's arguments and the start-up line's parser."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import onnx_bench_layers as layers  # noqa: E402


def node(i, name, op, inputs, out, shape):
    return {"index": i, "name": name, "op_type": op, "inputs": inputs,
            "shapes": [{"name": out, "dtype": "float32", "shape": shape}]}


def attr(weight, pads=(0, 0, 0, 0), strides=(1, 1), group=1):
    return {"weight": list(weight), "group": group, "strides": list(strides), "pads": list(pads),
            "dilations": [1, 1], "auto_pad": "NOTSET"}


# A bottleneck's tail: c1 (3x3) and its Relu; c2 (1x1) whose product also adds the downsample's
# output (ds, with a product of its own), then Relu.
PROFILE = {
    "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 4, 8, 8]}],
    "nodes": [node(0, "c1", "Conv", ["x", "w1", "b1"], "y1", [1, 8, 8, 8]),
              node(1, "r1", "Relu", ["y1"], "z1", [1, 8, 8, 8]),
              node(2, "c2", "Conv", ["z1", "w2", "b2"], "y2", [1, 16, 8, 8]),
              node(3, "ds", "Conv", ["x", "w3", "b3"], "y3", [1, 16, 8, 8]),
              node(4, "add", "Add", ["y2", "y3"], "s", [1, 16, 8, 8]),
              node(5, "r2", "Relu", ["s"], "out", [1, 16, 8, 8])],
    "launches": [{"kernel": "E_8_10_10", "seconds": 0.001, "nodes": [0]},
                 {"kernel": "r_64_8_36", "seconds": 0.002, "nodes": [0]},
                 {"kernel": "E_8_64", "seconds": 0.0005, "nodes": [0, 1]},
                 {"kernel": "r_16_64_4", "seconds": 0.001, "nodes": [3]},
                 {"kernel": "r_16_64_8", "seconds": 0.003, "nodes": [2, 3, 4, 5]},
                 {"kernel": "E_copy", "seconds": 0.0002, "nodes": []}],
}
ATTRS = {"c1": attr([8, 4, 3, 3], pads=(1, 1, 1, 1)), "c2": attr([16, 8, 1, 1]),
         "ds": attr([16, 4, 1, 1])}


class ConvLayers(unittest.TestCase):
    def test_launches_go_to_the_conv_whose_product_they_are(self):
        got = {l["name"]: l for l in layers.conv_layers(PROFILE, ATTRS)}
        self.assertEqual(list(got), ["c1", "c2", "ds"])
        self.assertAlmostEqual(got["c1"]["seconds"], 0.0035)
        self.assertEqual(got["c1"]["launches"], 3)
        self.assertAlmostEqual(got["c2"]["seconds"], 0.003)  # the product with ds's output added
        self.assertAlmostEqual(got["ds"]["seconds"], 0.001)
        self.assertFalse(any(l["shared"] for l in got.values()))
        # 2 x output elements x weight elements per output channel.
        self.assertEqual(got["c1"]["flops"], 2 * 8 * 64 * 4 * 9)
        self.assertEqual(got["c2"]["flops"], 2 * 16 * 64 * 8)
        self.assertEqual(got["ds"]["flops"], 2 * 16 * 64 * 4)
        self.assertEqual(got["c1"]["input"], [1, 4, 8, 8])  # a graph input
        self.assertEqual(got["c2"]["input"], [1, 8, 8, 8])  # another node's output

    def test_a_launch_no_single_conv_owns_is_split(self):
        p = dict(PROFILE, launches=PROFILE["launches"] + [
            {"kernel": "r_16_64_8", "seconds": 0.001, "nodes": [2]},
            {"kernel": "E_both", "seconds": 0.002, "nodes": [2, 3]}])
        got = {l["name"]: l for l in layers.conv_layers(p, ATTRS)}
        self.assertTrue(got["c2"]["shared"] and got["ds"]["shared"])
        self.assertFalse(got["c1"]["shared"])
        # c2: its product now, the launch it shared with ds (3 ms, c2 and ds both own products),
        # half of E_both.
        self.assertAlmostEqual(got["c2"]["seconds"], 0.001 + 0.0015 + 0.001)
        self.assertAlmostEqual(got["ds"]["seconds"], 0.001 + 0.0015 + 0.001)

    def test_reference_arguments_and_choice(self):
        got = layers.conv_layers(PROFILE, ATTRS)
        self.assertEqual(layers.reference_args(got[0]),
                         ["--input", "1,4,8,8", "--weight", "8,4,3,3", "--stride", "1", "--pad", "1",
                          "--group", "1"])
        self.assertIsNone(layers.reference_args(dict(got[0], pads=[0, 0, 1, 1])))
        self.assertIsNone(layers.reference_args(dict(got[0], auto_pad="SAME_UPPER")))
        self.assertEqual([(w, l["name"]) for w, l in layers.reference_layers(got)], [("largest", "c1")])
        got[1]["seconds"] = 1.0
        self.assertEqual([(w, l["name"]) for w, l in layers.reference_layers(got)],
                         [("largest", "c1"), ("slowest", "c2")])
        self.assertEqual(layers.reference_layers([]), [])

    def test_layer_table_rows(self):
        table = layers.layer_table("net", layers.conv_layers(PROFILE, ATTRS), 10.0, 1)
        row = next(r for r in table if r.startswith("| 0 | c1 |"))
        gflops = 2 * 8 * 64 * 4 * 9 / 0.0035 * 1e-9
        self.assertIn(f"| 3.500 | {gflops:.1f} | {100 * gflops / 10:.0f}% |", row)


class FirstOutputs(unittest.TestCase):
    def test_parses_the_line(self):
        text = ("x\nfirst outputs: 9103.2 ms after start (model load 1095.5 ms); 78 kernels compiled "
                "(72 by the compiler, 0 from the disk cache) in 7252.0 ms, 2 compiler processes\nmore")
        self.assertEqual(layers.parse_first_outputs(text),
                         {"first_ms": 9103.2, "load_ms": 1095.5, "kernels": 78, "by_compiler": 72,
                          "from_disk": 0, "compile_ms": 7252.0, "processes": 2})
        self.assertIsNone(layers.parse_first_outputs("model.onnx: 1 runs"))


if __name__ == "__main__":
    unittest.main()
