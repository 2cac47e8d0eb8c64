#!/usr/bin/python3
"""Exports the real networks of `make onnx-networks` to ONNX.

Runs under Debian's interpreter with python3-torch and python3-torchvision (install-deps.sh).
Weights are random from a fixed seed (no download); every network is in eval mode. For each network
NAME it writes OUT/NAME/model.onnx, OUT/NAME/inputs.npz (the graph inputs, by name, in graph order),
OUT/NAME/truth.npz (the outputs of the same network run by torch in float64, by output name) and
OUT/NAME/data.json (the comparison's tolerances, in the layout of ONNX's real-model tests);
scripts/onnx_networks_reference.py adds ONNX Runtime's outputs.

  --set small   the networks `make test` runs (small inputs; a few seconds each on ember)
  --set all     those and larger ones (standard input sizes, deeper encoders)
  --set bench   make bench-onnx's networks (scripts/onnx_bench.py), at standard input sizes
  --batch-axis  dimension 0 symbolic ('batch'), for make bench-onnx
"""
import argparse
import json
import math
import os
import sys
import typing

import numpy as np
import torch
import torchvision


# ---- a BERT-class encoder (Devlin et al. 2019, "BERT", section 3: post-LayerNorm blocks with
# ---- GELU feed-forward layers; word + position + token-type embeddings; a tanh pooler) -------
class SelfAttention(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.dk = heads, d // heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))

    def forward(self, x, mask_bias):
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, self.dk).transpose(1, 2)  # [b, h, t, dk]
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dk) + mask_bias
        ctx = torch.softmax(scores, dim=-1) @ v
        return self.o(ctx.transpose(1, 2).reshape(b, t, d))


class EncoderLayer(torch.nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.attn = SelfAttention(d, heads)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d, eps=1e-12), torch.nn.LayerNorm(d, eps=1e-12)
        self.ff1, self.ff2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)

    def forward(self, x, mask_bias):
        x = self.norm1(x + self.attn(x, mask_bias))
        return self.norm2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class Bert(torch.nn.Module):
    def __init__(self, vocab=1000, d=64, heads=4, ff=256, layers=2, max_len=64):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, d)
        self.position = torch.nn.Embedding(max_len, d)
        self.token_type = torch.nn.Embedding(2, d)
        self.norm = torch.nn.LayerNorm(d, eps=1e-12)
        self.layers = torch.nn.ModuleList(EncoderLayer(d, heads, ff) for _ in range(layers))
        self.pool = torch.nn.Linear(d, d)

    def forward(self, input_ids, attention_mask, token_type_ids):
        t = input_ids.shape[1]
        pos = torch.arange(t, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids))
        # Masked keys get -10000 added to their scores (BERT's reference implementation).
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pool(x[:, 0]))


class TorchEncoder(torch.nn.Module):
    """torch.nn.TransformerEncoder (pre-LayerNorm, batch-first) over embeddings: the graph
    torch's own transformer modules export."""

    def __init__(self, vocab=1000, d=64, heads=4, ff=128, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True,
                                                 norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, input_ids, padding_mask):
        return self.encoder(self.embed(input_ids), src_key_padding_mask=padding_mask)


def bert_inputs(batch, t, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, t), generator=g)
    mask = torch.ones(batch, t, dtype=torch.int64)
    mask[-1, t // 2:] = 0  # the last sequence is padded
    types = torch.zeros(batch, t, dtype=torch.int64)
    types[:, t // 2:] = 1
    return ids, mask, types


def image(n, size, seed):
    return torch.randn(n, 3, size, size, generator=torch.Generator().manual_seed(seed))


def calibrated(model, batch):
    """The model with its BatchNorm statistics measured on `batch`, as training would leave them.
    With the initial statistics (mean 0, variance 1) activations shrink or grow layer by layer
    (MobileNetV2's logits end near 1e-9), which would make an absolute tolerance vacuous."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = None  # a plain average over the calibration steps
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(batch)
    return model


def vision(name, size, n=1, **kw):
    def make():
        model = getattr(torchvision.models, name)(weights=None, **kw)
        return calibrated(model, image(8, size, 4)), (image(n, size, 1),)
    return make


def bert(d, heads, ff, layers, batch, t):
    def make():
        ids, mask, types = bert_inputs(batch, t, 1000, 2)
        return Bert(1000, d, heads, ff, layers), (ids, mask, types)
    return make


def torch_encoder():
    ids, mask, _ = bert_inputs(2, 16, 1000, 3)
    return TorchEncoder(), (ids, mask == 0)


class Net(typing.NamedTuple):
    make: typing.Callable  # () -> (module, input tensors)
    inputs: list  # the graph inputs' names
    opset: int
    atol: float = 1e-7
    weights_as_inputs: bool = False  # initializers also listed as graph inputs (defaults)
    dynamic: bool = False  # every input's dims 0 and 1 symbolic (batch, sequence)


# rtol is ONNX's backend-test default, 1e-3, and so is atol, 1e-7, where a network meets it. Where
# outputs cancel to near zero after long float32 sums, every float32 implementation keeps an
# absolute error of a few units of float32's spacing at the sums' scale: in ResNet-18 and
# MobileNetV2 (calibrated statistics, logits up to |2|) ember and ONNX Runtime each differ from
# torch run in float64 by up to 6e-6 and from each other by up to 5e-6, so 1e-7 is below both
# libraries' accuracy there; likewise BERT-mini's LayerNorm outputs (up to |4|; each library is
# 1.3e-6 from float64, and they differ by 4.5e-7 at an output of 4e-5). Those networks use atol
# 1e-5 (torch.testing's float32 default); ResNet-50 at 224x224 (53 layers of sums up to 4,608
# long) uses 1e-4: ember is 3.1e-5 and ONNX Runtime 2.5e-5 from float64 there. onnx-networks.md
# lists each network's errors against ONNX Runtime and against float64.
BERT_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
CANCELS, DEEP = 1e-5, 1e-4
IMAGE = ["input"]
SMALL = {
    "resnet18": Net(vision("resnet18", 64), IMAGE, 13, CANCELS),
    "squeezenet1_1": Net(vision("squeezenet1_1", 64), IMAGE, 13),
    "mobilenet_v2": Net(vision("mobilenet_v2", 64), IMAGE, 13, CANCELS),
    # Batch and sequence length symbolic, as BERT exports are.
    "bert_tiny": Net(bert(64, 4, 256, 2, 2, 16), BERT_INPUTS, 14, dynamic=True),
    # Opset 17: LayerNormalization as one op.
    "torch_transformer_encoder": Net(torch_encoder, ["input_ids", "padding_mask"], 17),
    # An old exporter's layout: opset 9, every weight also a graph input with its initializer as
    # the default (torch writes IR version 4).
    "resnet18_opset9": Net(vision("resnet18", 64), IMAGE, 9, CANCELS, weights_as_inputs=True),
}
LARGE = {
    "resnet50": Net(vision("resnet50", 224), IMAGE, 13, DEEP),
    "mobilenet_v2_224": Net(vision("mobilenet_v2", 224), IMAGE, 13, CANCELS),
    "mobilenet_v3_small": Net(vision("mobilenet_v3_small", 224), IMAGE, 13),
    "squeezenet1_0": Net(vision("squeezenet1_0", 224), IMAGE, 13),
    "squeezenet1_1_opset9": Net(vision("squeezenet1_1", 224), IMAGE, 9, weights_as_inputs=True),
    "mobilenet_v3_small_opset9": Net(vision("mobilenet_v3_small", 224), IMAGE, 9,
                                     weights_as_inputs=True),
    "bert_mini": Net(bert(256, 4, 1024, 4, 2, 64), BERT_INPUTS, 14, CANCELS, dynamic=True),
}


# make bench-onnx's set (scripts/onnx_bench.py): the standard input sizes, batch symbolic.
BENCH = {
    "resnet18_224": Net(vision("resnet18", 224), IMAGE, 13, DEEP),
    "resnet50": LARGE["resnet50"],
    "mobilenet_v2_224": LARGE["mobilenet_v2_224"],
    "mobilenet_v3_small": LARGE["mobilenet_v3_small"],
    "squeezenet1_1_224": Net(vision("squeezenet1_1", 224), IMAGE, 13),
    "bert_mini": LARGE["bert_mini"],
}


def export(name, net, out, batch_axis=False):
    torch.manual_seed(0)  # the weights
    model, args = net.make()
    model.eval()
    with torch.no_grad():
        outputs = model(*args)
    n_out = len(outputs) if isinstance(outputs, tuple) else 1
    output_names = ["output"] if n_out == 1 else [f"output_{i}" for i in range(n_out)]
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    dynamic = {n: {0: "batch", 1: "sequence"} for n in net.inputs} if net.dynamic else None
    if batch_axis and not dynamic:  # the benchmark's: one file for every batch size
        dynamic = {n: {0: "batch"} for n in net.inputs + output_names}
    torch.onnx.export(model, args, os.path.join(d, "model.onnx"), opset_version=net.opset,
                      input_names=net.inputs, output_names=output_names, dynamic_axes=dynamic,
                      keep_initializers_as_inputs=net.weights_as_inputs, do_constant_folding=True)
    np.savez(os.path.join(d, "inputs.npz"), **{n: a.numpy() for n, a in zip(net.inputs, args)})
    # The same network and inputs in float64: how far each float32 run is from the exact result.
    with torch.no_grad():
        exact = model.double()(*(a.double() if a.is_floating_point() else a for a in args))
    exact = exact if isinstance(exact, tuple) else (exact,)
    np.savez(os.path.join(d, "truth.npz"), **{n: t.numpy() for n, t in zip(output_names, exact)})
    with open(os.path.join(d, "data.json"), "w") as f:
        json.dump({"model_name": name, "rtol": 1e-3, "atol": net.atol}, f)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="the folder that receives one folder per network")
    p.add_argument("--set", choices=["small", "all", "bench"], default="small")
    p.add_argument("--only", nargs="*", help="export only these networks")
    p.add_argument("--batch-axis", action="store_true",
                   help="dimension 0 of every input and output symbolic, named 'batch' "
                        "(make bench-onnx runs one file at several batch sizes)")
    a = p.parse_args()
    nets = BENCH if a.set == "bench" else dict(SMALL, **(LARGE if a.set == "all" else {}))
    for name, spec in nets.items():
        if a.only and name not in a.only:
            continue
        export(name, spec, a.out, a.batch_axis)
        print(f"exported {name}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
