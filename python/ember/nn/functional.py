"""ember.nn.functional: PyTorch's functional ops and losses (ember/nn/functional.h and
ember/activations.h give the formulas and errors)."""
from .._ember import _nn

linear = _nn.linear
gelu = _nn.gelu
silu = _nn.silu
softplus = _nn.softplus
leaky_relu = _nn.leaky_relu
softmax = _nn.softmax
log_softmax = _nn.log_softmax
dropout = _nn.dropout
mse_loss = _nn.mse_loss
smooth_l1_loss = _nn.smooth_l1_loss
nll_loss = _nn.nll_loss
cross_entropy = _nn.cross_entropy
binary_cross_entropy = _nn.binary_cross_entropy
binary_cross_entropy_with_logits = _nn.binary_cross_entropy_with_logits


def relu(input):
    return input.relu()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()
