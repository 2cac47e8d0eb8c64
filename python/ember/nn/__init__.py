"""ember.nn: modules (PyTorch's Module, layers, containers, activations and losses) over ember's
C++ ops; see module.py for how parameters are registered."""
from . import functional, init
from .module import Module, Parameter
from .modules import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Dropout, Flatten, GELU,
                      Identity, LeakyReLU, Linear, LogSoftmax, ModuleList, MSELoss, NLLLoss, ReLU,
                      Sequential, Sigmoid, SiLU, SmoothL1Loss, Softmax, Softplus, Tanh)

__all__ = ["Module", "Parameter", "functional", "init", "BCELoss", "BCEWithLogitsLoss",
           "CrossEntropyLoss", "Dropout", "Flatten", "GELU", "Identity", "LeakyReLU", "Linear",
           "LogSoftmax", "ModuleList", "MSELoss", "NLLLoss", "ReLU", "Sequential", "Sigmoid",
           "SiLU", "SmoothL1Loss", "Softmax", "Softplus", "Tanh"]
