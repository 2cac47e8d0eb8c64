"""ember.nn.init: initialisers in place on a tensor (PyTorch's names; ember/nn/init.h gives the
distributions), drawn from ember's generator (manual_seed)."""
from .._ember import _nn

orthogonal_ = _nn.orthogonal_
kaiming_uniform_ = _nn.kaiming_uniform_
xavier_uniform_ = _nn.xavier_uniform_
uniform_ = _nn.uniform_
normal_ = _nn.normal_
zeros_ = _nn.zeros_
constant_ = _nn.constant_
