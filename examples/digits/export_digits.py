#!/usr/bin/python3
"""Writes scikit-learn's 8x8 handwritten digits (1797 images, shipped with the package: nothing is
downloaded) as .npy files for examples/digits/digits.cpp, split 80/20 with the classes' shares kept
(stratified) and a fixed seed:
  train_x.npy float32 [1437, 1, 8, 8], train_y.npy int64 [1437],
  test_x.npy  float32 [360, 1, 8, 8],  test_y.npy  int64 [360].
Pixel values 0..16 are scaled to [0, 1]. Usage: export_digits.py OUT_DIR"""
import os
import sys

try:
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
except ImportError as e:
    sys.exit(f"export_digits: {e}: the digits come with Debian's python3-sklearn, for the system "
             "interpreter /usr/bin/python3 (bash scripts/install-deps.sh examples)")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, stratify=y, random_state=0)
    for name, a in [("train_x", x_train), ("train_y", y_train), ("test_x", x_test),
                    ("test_y", y_test)]:
        np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a))
    print(f"digits: {len(y_train)} training and {len(y_test)} test images in {out}")


if __name__ == "__main__":
    main()
