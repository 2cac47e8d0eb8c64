#!/usr/bin/python3
"""The PyTorch pair of examples/digits/digits.cpp, for the time comparison: the same model (two 3x3
convolutions with batch norm, ReLU and 2x2 max pooling, then two linear layers), the same data
(export_digits.py's .npy files), Adam at 2e-3, batches of 32 (full batches only), the same epochs.
Prints the same lines: the loss per epoch, the test accuracy and the training time.
Usage: digits_torch.py DATA_DIR [--epochs N] [--min-accuracy A]  (Debian's python3-torch, the system interpreter)"""
import argparse
import os
import sys
import time

import numpy as np
import torch
from torch import nn


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def load(data, split):
    x = np.load(os.path.join(data, split + "_x.npy"))
    y = np.load(os.path.join(data, split + "_y.npy"))
    return torch.from_numpy(x), torch.from_numpy(y)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--min-accuracy", type=float, default=0.0)
    a = p.parse_args()
    x_train, y_train = load(a.data, "train")
    x_test, y_test = load(a.data, "test")
    torch.manual_seed(0)
    net = lenet()
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    b = 32
    steps = len(y_train) // b
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for e in range(a.epochs):
        order = torch.from_numpy(rng.permutation(len(y_train)))
        total = 0.0
        for s in range(steps):
            idx = order[s * b:(s + 1) * b]
            loss = nn.functional.cross_entropy(net(x_train[idx]), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {e + 1:2d}  loss {total / steps:.4f}")
    seconds = time.perf_counter() - start
    net.eval()
    with torch.no_grad():
        acc = (net(x_test).argmax(1) == y_test).double().mean().item()
    print(f"test accuracy {acc * 100:.2f}% ({len(y_test)} images), training {seconds:.1f} s for "
          f"{a.epochs} epochs (PyTorch {torch.__version__}, {torch.get_num_threads()} threads)")
    if acc < a.min_accuracy:
        sys.exit(f"digits_torch: test accuracy {acc * 100:.2f}% is below the required "
                 f"{a.min_accuracy * 100:.2f}%")


if __name__ == "__main__":
    main()
