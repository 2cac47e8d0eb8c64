"""ember.nn.Module: PyTorch's Module in Python, over ember tensors.

A module's parameters are tensors that require grad; its buffers are other tensors it keeps
(state, not trained). Assigning a tensor that requires grad to an attribute registers it as a
parameter (ember has no Parameter class: ``nn.Parameter(t)`` makes a leaf tensor with a buffer of
its own; unlike PyTorch, any tensor that requires grad counts), assigning a Module registers a
child; names in ``named_parameters()`` and ``state_dict()`` are PyTorch's and
libtorch's ("0.weight", "encoder.bias"), so a state dict saved from Python loads into the same
C++ module and back.
"""
from collections import OrderedDict

from .._ember import Tensor


def Parameter(data, requires_grad=True):  # noqa: N802  (PyTorch's name)
    """A leaf tensor holding data's values in a buffer of its own, requiring grad."""
    t = data.detach().clone()
    t.realize()
    return t.requires_grad_(requires_grad)


class Module:
    """Base class of modules: subclasses set attributes in __init__ and define forward()."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration ---------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, Tensor) and value.requires_grad:
            self._parameters[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Registers param (None: a placeholder, as PyTorch's bias=False) under name."""
        if param is not None and not (isinstance(param, Tensor) and param.requires_grad):
            raise TypeError(f"register_parameter: '{name}' must be a tensor that requires grad "
                            "(nn.Parameter(t)) or None")
        self.__setattr__(name, param)
        self._parameters[name] = param

    def register_buffer(self, name, tensor):
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: '{name}' must be a tensor or None")
        self.__setattr__(name, tensor)
        self._parameters.pop(name, None)
        self._buffers[name] = tensor

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: '{name}' is not a Module")
        self.__setattr__(name, module)
        self._modules[name] = module

    # ---- traversal ------------------------------------------------------------------------------
    def named_children(self):
        return ((n, m) for n, m in self._modules.items() if m is not None)

    def children(self):
        return (m for _, m in self.named_children())

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self.named_children():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (m for _, m in self.named_modules())

    def _named(self, table, recurse):
        modules = self.named_modules() if recurse else [("", self)]
        seen = set()
        for prefix, module in modules:
            for name, t in getattr(module, table).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield (f"{prefix}.{name}" if prefix else name), t

    def named_parameters(self, recurse=True):
        return self._named("_parameters", recurse)

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse))

    def named_buffers(self, recurse=True):
        return self._named("_buffers", recurse)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse))

    # ---- state ----------------------------------------------------------------------------------
    def state_dict(self):
        """Parameters then buffers by name (the tensors themselves, as PyTorch's, detached)."""
        out = OrderedDict((n, p.detach()) for n, p in self.named_parameters())
        out.update((n, b.detach()) for n, b in self.named_buffers())
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copies the values in place into the parameters and buffers (their buffers kept, so
        an optimizer over them goes on). strict: the names must match exactly (KeyError);
        shapes must match (ValueError). Returns (missing_keys, unexpected_keys)."""
        own = OrderedDict(self.named_parameters())
        own.update(self.named_buffers())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name, target in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            if not isinstance(value, Tensor):
                from .. import tensor as _tensor
                value = _tensor(value, dtype=target.dtype)
            if tuple(value.shape) != tuple(target.shape):
                raise ValueError(f"load_state_dict: '{name}' has shape {tuple(value.shape)}, the "
                                 f"module's has {tuple(target.shape)}")
            from .. import no_grad
            with no_grad():
                target.copy_(value)
                target.realize()
        return missing, unexpected

    # ---- modes and gradients --------------------------------------------------------------------
    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        """Drops every parameter's gradient (PyTorch's default, set_to_none)."""
        for p in self.parameters():
            p.grad = None

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    # ---- calling --------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in self.named_children()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ")" if not lines else head + "\n  " + "\n  ".join(lines) + "\n)"
