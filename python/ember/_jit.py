"""ember.jit: capture the kernels a function of tensors runs, then replay them on new inputs
(ember::jit, ember/jit.h): no graph building, scheduling or compiling on a replay.

    @ember.jit
    def actor(obs):
        return model(obs).tanh()

    actor(x)   # 1st call: runs the function;  2nd: runs it and captures;  then: replays

Arguments are tensors (NumPy arrays are taken with ember.from_numpy), passed positionally; the
function returns a tensor or a tuple or list of tensors. Python code in the function runs only
on the calls that are not replays: keep counters and branches on host values outside it, or
pass such values in as tensors. Parameters and optimizer state that the function reads are
bound by their buffers, so a replay always reads their current values. A call with another
input shape or dtype raises ValueError (call reset(), or use one jit per signature). Outputs
never require grad, on any call (they are detached, as a replay's are: call backward() inside
the function). Reading tensor data inside the function (item(), numpy(), tolist(), np.asarray,
DLPack, float(), int(), bool(), printing) raises RuntimeError, as the value would be read once
and frozen into the replays.
"""
import functools
from typing import Callable
import weakref

import numpy as _np

from . import _ember

__all__ = ["jit", "JitFunction"]


class JitFunction:
    """A function wrapped by ember.jit; ``calls``, ``replays`` and ``captured_launches`` (the
    kernels a replay launches) count what it did."""

    def __init__(self, fn):
        if not callable(fn):  # said here, not on the first call
            raise TypeError(f"ember.jit wraps a function of tensors; got "
                            f"{type(fn).__name__} {fn!r}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._structure = None  # how the function returned its tensors: None, tuple or list
        # A weak reference: the C++ jit holding this object would make a cycle that Python's
        # collector cannot see.
        ref = weakref.ref(self)
        self._impl = _ember._jit.Jit(lambda inputs: ref()._run(inputs))

    def _run(self, inputs):
        out = self._fn(*inputs)
        if isinstance(out, _ember.Tensor):
            self._structure = None
            return [out]
        if isinstance(out, (tuple, list)) and all(isinstance(t, _ember.Tensor) for t in out):
            self._structure = type(out)
            return list(out)
        raise TypeError(f"ember.jit: {getattr(self._fn, '__name__', 'the function')} must return "
                        f"a tensor or a tuple or list of tensors, not {type(out).__name__}")

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("ember.jit: pass the tensors positionally (keyword arguments are not "
                            "part of a capture's signature)")
        inputs = []
        for i, a in enumerate(args):
            if isinstance(a, _np.ndarray):
                from . import from_numpy
                a = from_numpy(a)
            if not isinstance(a, _ember.Tensor):
                raise TypeError(f"ember.jit: argument {i} is a {type(a).__name__}; a jitted "
                                "function takes tensors (or NumPy arrays)")
            inputs.append(a)
        # Detached on every call: a replay's outputs have no graph, so the eager and capture
        # calls' do not either (backward() must not work on some calls only).
        out = [t.detach() for t in self._impl(inputs)]
        return out[0] if self._structure is None else self._structure(out)

    def reset(self):
        """Drops the capture: the next call runs the function, the one after captures again."""
        self._impl.reset()

    @property
    def calls(self) -> int:
        return self._impl.calls

    @property
    def replays(self) -> int:
        return self._impl.replays

    @property
    def captured_launches(self) -> int:
        return self._impl.captured_launches

    def __get__(self, obj, objtype=None):
        """As a method: one jit per instance (each reads its own parameters)."""
        if obj is None:
            return self
        name = "_ember_jit_" + self.__name__
        bound = obj.__dict__.get(name)
        if bound is None:
            bound = JitFunction(self._fn.__get__(obj, objtype))
            object.__setattr__(obj, name, bound)
        return bound


def jit(fn: Callable) -> "JitFunction":
    """Wraps fn (a function of tensors returning tensors) in a JitFunction; a decorator."""
    return JitFunction(fn)
