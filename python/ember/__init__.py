"""ember: a lazy, fusing, code-generating tensor library with autograd, in PyTorch's names.

Operations build a graph; data is computed (fused kernels, compiled and cached) when it is read:
``item()``, ``tolist()``, ``numpy()``, printing.

NumPy exchange:
  * ``Tensor.numpy()`` shares the tensor's buffer (no copy); the array keeps the buffer alive.
    ``t.detach().numpy()`` of a realized tensor (a parameter) shares t's buffer, as torch's:
    writes through the array are t's, and t's in-place updates and optimizer steps the array's.
    A lazy tensor is realized first, and a view (a slice, a transpose) is first copied into a
    buffer of its own, which the array then shares. Writing through the array changes the
    tensor, and any lazy result built from it that is not realized yet.
  * ``from_numpy(array)`` shares the array's memory when it is C-contiguous, aligned, writeable
    and native (else copies); ``tensor(data)`` always copies.
  * DLPack both ways: ``Tensor.__dlpack__``/``__dlpack_device__`` and ``from_dlpack(obj)``
    share CPU memory with NumPy (``numpy.from_dlpack``), PyTorch and any DLPack producer.

Threads: ember releases the GIL while it computes (realizing for item(), numpy(), printing and
in-place operators; backward(); optimizer steps; save and load), so other Python threads run
meanwhile, and several threads may compute at once. One tensor is not for sharing between
threads that change it.

Errors are Python's: ValueError for shapes, dtypes and bad values, IndexError for indices,
OSError for files, with ember's messages.
"""
import os as _os
import collections as _collections

import numpy as _np

from ._ember import (Tensor, dtype, manual_seed, bool, uint8, int8, int16, int32, int64,  # noqa: A004
                     uint16, uint32, uint64, float16, bfloat16, float32, float64)
from . import _ember

float = float32  # noqa: A001  (PyTorch's aliases)
double = float64
long = int64
int = int32  # noqa: A001
half = float16

__all__ = ["Tensor", "dtype", "tensor", "from_numpy", "from_dlpack", "zeros", "ones", "arange",
           "rand", "randn", "manual_seed", "save", "load", "nn", "optim", "no_grad", "envs", "ppo", "onnx", "jit", "JitFunction", "bool", "uint8", "int8", "int16", "int32", "int64", "uint16",
           "uint32", "uint64", "float16", "bfloat16", "float32", "float64"]


def _size(size):
    """zeros(2, 3) and zeros((2, 3)) alike."""
    if len(size) == 1 and not isinstance(size[0], (type(0), _np.integer)):
        size = size[0]
    return [type(0)(s) for s in size]


def zeros(*size, dtype=None, requires_grad=False):
    return _ember._zeros(_size(size), dtype, requires_grad)


def ones(*size, dtype=None, requires_grad=False):
    return _ember._ones(_size(size), dtype, requires_grad)


def rand(*size, dtype=None, requires_grad=False):
    """Uniform in [0, 1), from ember's counter-based generator (see manual_seed)."""
    return _ember._rand(_size(size), dtype, requires_grad)


def randn(*size, dtype=None, requires_grad=False):
    """Standard normal, from ember's counter-based generator (see manual_seed)."""
    return _ember._randn(_size(size), dtype, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, requires_grad=False):
    """[start, end) by step; int64 unless a bound or step is a float or a dtype is given."""
    if end is None:
        start, end = 0, start
    return _ember._arange(start, end, step, dtype, requires_grad)


def from_numpy(array):
    """A tensor over the array's memory where ember can use it as it is, else over a copy.

    Shared (no copy, as torch.from_numpy) when the array is C-contiguous, aligned, writeable, in
    native byte order and not empty: writes through either are seen by the other, and the tensor
    keeps the array alive. Otherwise the elements are copied (non-contiguous and byte-swapped
    arrays converted; read-only arrays copied, since ember's in-place ops would write into them).
    NumPy dtypes ember lacks (complex, object, strings) raise TypeError.
    """
    if not isinstance(array, _np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, not {type(array).__name__}")
    flags = array.flags
    if (flags.c_contiguous and flags.aligned and flags.writeable and array.dtype.isnative
            and array.size > 0):
        return _ember._from_numpy_shared(array)
    return _from_numpy_copy(array)


def _from_numpy_copy(array):
    if not array.flags.c_contiguous:
        array = array.copy(order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return _ember._from_numpy_copy(array)


def from_dlpack(ext):
    """A tensor over the memory of any object with ``__dlpack__`` (a NumPy array, a PyTorch CPU
    tensor, an ember tensor) or over a DLPack capsule, without a copy (as torch.from_dlpack).

    The tensor holds the producer's buffer until it dies. CPU memory only (ValueError for other
    devices); strided or misaligned data is copied into a row-major buffer of ember's.
    """
    if hasattr(ext, "__dlpack__"):
        if hasattr(ext, "__dlpack_device__"):
            device = tuple(ext.__dlpack_device__())
            if device[0] != 1:  # kDLCPU
                raise ValueError(f"from_dlpack: the tensor is on DLPack device {device}; ember "
                                 "reads CPU memory only")
        ext = ext.__dlpack__()
    return _ember._from_dlpack_capsule(ext)


def tensor(data, *, dtype=None, requires_grad=False):
    """A tensor from a number, a (nested) list or a NumPy array (copied), as torch.tensor.

    Python floats give float32 and ints int64 (PyTorch's defaults); an array keeps its dtype.
    """
    if isinstance(data, Tensor):
        t = data.detach().clone()
    else:
        array = _np.asarray(data)
        if not isinstance(data, _np.ndarray) and array.dtype == _np.float64:
            array = array.astype(_np.float32)
        t = _from_numpy_copy(array)
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


class StateDict(_collections.OrderedDict):
    """What ember.load returns: the file's tensors by name, in file order, and its metadata."""

    def __init__(self, tensors=(), metadata=None):
        super().__init__(tensors)
        self.metadata = dict(metadata or {})


def save(obj, path, metadata=None):
    """Writes a safetensors file (readable by Python's safetensors and ember's C++ ember::load):
    a Module's state dict, an optimizer's state with its learning rate (metadata "lr"), or a dict
    of name -> tensor. OSError on failure."""
    from .nn import Module
    from .optim import Optimizer
    path = _os.fspath(path)
    if isinstance(obj, Optimizer):
        if metadata:
            raise ValueError("save: an optimizer's file holds its own metadata (the lr)")
        obj._impl.save(path)
        return
    tensors = obj.state_dict() if isinstance(obj, Module) else obj
    if not isinstance(tensors, dict) or not all(isinstance(t, Tensor) for t in tensors.values()):
        raise TypeError("save: expects a Module, an optimizer or a dict of name -> ember.Tensor")
    _ember._io.save_file([(str(k), v.detach()) for k, v in tensors.items()], path,
                         {str(k): str(v) for k, v in (metadata or {}).items()})


def load(path):
    """A safetensors file's tensors (a StateDict: an OrderedDict by name in file order, with the
    file's metadata), for Module.load_state_dict and Optimizer.load_state_dict. OSError for a
    missing or malformed file."""
    tensors, metadata = _ember._io.load_file(_os.fspath(path))
    return StateDict(tensors, metadata)


class no_grad:
    """Within it, results of operations do not require grad (as torch.no_grad); also a
    decorator."""

    def __init__(self):
        self._guards = []

    def __enter__(self):
        guard = _ember._NoGradGuard()
        guard.enter()
        self._guards.append(guard)
        return None

    def __exit__(self, *exc):
        self._guards.pop().exit()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper


from ._jit import jit, JitFunction  # noqa: E402
from . import nn, optim, envs, ppo, onnx  # noqa: E402  (they import the names above)
