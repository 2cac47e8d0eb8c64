"""ember.nn's layers, containers and losses, in PyTorch's names and signatures. Linear draws its
initial weights as ember's C++ nn::Linear does (libtorch's kaiming_uniform_ with a = sqrt(5)),
so a seeded Python model starts from the C++ model's values."""
from collections import OrderedDict

from .. import _ember
from . import functional as F
from .module import Module

_nn = _ember._nn


class Identity(Module):
    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b; x [..., in_features] -> [..., out_features]."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        weight, b = _nn.linear_parameters(in_features, out_features, bias)
        self.weight = weight
        self.register_parameter("bias", b)

    def forward(self, input):
        if input.ndim == 0 or input.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected input with last dim {self.in_features}, got "
                             f"shape {tuple(input.shape)}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def _activation(name, fn, doc):
    def forward(self, input):
        return fn(input)
    return type(name, (Module,), {"forward": forward, "__doc__": doc})


ReLU = _activation("ReLU", F.relu, "max(x, 0)")
Tanh = _activation("Tanh", F.tanh, "tanh(x)")
Sigmoid = _activation("Sigmoid", F.sigmoid, "1 / (1 + exp(-x))")
SiLU = _activation("SiLU", F.silu, "x sigmoid(x)")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)


class Softmax(Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Dropout(Module):
    """Zeroes elements with probability p in training mode (scaled by 1 / (1 - p)); identity in
    eval mode."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, input):
        return F.dropout(input, self.p, self.training)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        shape = tuple(input.shape)
        s = self.start_dim % max(len(shape), 1)
        e = self.end_dim % max(len(shape), 1)
        inner = 1
        for d in shape[s:e + 1]:
            inner *= d
        return input.reshape(shape[:s] + (inner,) + shape[e + 1:])


class _Container(Module):
    """What Sequential and ModuleList share: children named "0", "1", ... by position."""

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(_Container):
    """Applies its modules in order; children are named "0", "1", ... (or by an OrderedDict's
    keys), as in PyTorch."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_Container):
    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(NLLLoss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(weight, ignore_index, reduction)
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(BCELoss):
    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(weight, reduction)
        self.pos_weight = pos_weight

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
