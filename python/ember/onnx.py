"""ONNX models on ember (the C++ frontend, ember/onnx/model.h): opsets 1 to 17 of the default
domain, run as lazy, fused ember graphs.

    model = ember.onnx.load("model.onnx")
    y = model(x)                    # inputs in the model's order, or by name: model(input=x)

Inputs are ember tensors or NumPy arrays (taken with ember.from_numpy); an input that has a
default (an initializer) may be left out. The result is a tensor, or a tuple of tensors when the
model has several outputs. Errors: OSError for a file that cannot be read or is not a valid
model (ember's message names the file and the reason); ValueError for an op, attribute or
element type ember cannot run, and for a wrong input (name, dtype, shape).
"""
import os as _os
from typing import List, Tuple, Union

import numpy as _np

from . import _ember

__all__ = ["Model", "load", "load_tensor"]


def _frontend():
    if not hasattr(_ember, "_onnx"):
        raise RuntimeError("ember.onnx: this build of ember has no ONNX frontend (it needs the "
                           "Debian packages libonnx-dev and libprotobuf-dev when it is built)")
    return _ember._onnx


def _tensor(name, value):
    if isinstance(value, _np.ndarray):
        from . import from_numpy
        return from_numpy(value)
    if not isinstance(value, _ember.Tensor):
        raise TypeError(f"ember.onnx: input '{name}' is a {type(value).__name__}; pass an "
                        "ember.Tensor or a numpy.ndarray")
    return value


class Model:
    """A loaded ONNX model: call it with its inputs. ``input_names`` and ``output_names`` in the
    model's order, ``opsets`` [(domain, version)], ``producer``, ``unsupported_ops()``."""

    def __init__(self, impl):
        self._impl = impl

    @property
    def input_names(self) -> List[str]:
        return self._impl.input_names

    @property
    def output_names(self) -> List[str]:
        return self._impl.output_names

    @property
    def opsets(self) -> List[Tuple[str, int]]:
        return self._impl.opsets

    @property
    def producer(self):
        return self._impl.producer

    def unsupported_ops(self):
        """The op types in the model that ember cannot run (they raise ValueError when run)."""
        return self._impl.unsupported_ops()

    def __call__(self, *args, **kwargs) -> Union["_ember.Tensor", Tuple["_ember.Tensor", ...]]:
        names = self.input_names
        if len(args) > len(names):
            raise ValueError(f"ember.onnx: the model takes {len(names)} inputs "
                             f"({', '.join(names)}), got {len(args)}")
        named = dict(zip(names, args))
        for name in kwargs:
            if name in named:
                raise TypeError(f"ember.onnx: input '{name}' is given twice")
        named.update(kwargs)
        outputs = self._impl.run([(n, _tensor(n, v)) for n, v in named.items()])
        tensors = tuple(t for _, t in outputs)
        return tensors[0] if len(tensors) == 1 else tensors

    def __repr__(self):
        return (f"<ember.onnx.Model inputs={self.input_names} outputs={self.output_names} "
                f"producer={self.producer!r}>")


def load(path: Union[str, "_os.PathLike[str]"]) -> "Model":
    """Loads an ONNX model file (checked by ONNX's checker and shape inference); external data
    files are looked up beside it. OSError for a missing, unreadable or malformed file."""
    return Model(_frontend().load(_os.fspath(path)))


def load_tensor(path: Union[str, "_os.PathLike[str]"]) -> "_ember.Tensor":
    """A file holding one serialized onnx.TensorProto (as ONNX's test data stores inputs and
    outputs), as a tensor. OSError for a malformed file."""
    return _frontend().load_tensor(_os.fspath(path))
