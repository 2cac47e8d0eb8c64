"""ember.optim: ember's C++ optimizers (ember/optim/optimizer.h gives the update rules, which are
PyTorch's) over parameters given from Python. step() updates the parameters in place (their
buffers kept) and runs without the GIL. One parameter group: ``params`` is an iterable of
tensors (a list of dicts raises TypeError)."""
from .. import _ember

_optim = _ember._optim


def _params(params, who):
    params = list(params)
    if any(isinstance(p, dict) for p in params):
        raise TypeError(f"{who}: parameter groups (dicts) are not supported; pass the tensors")
    return params


class Optimizer:
    def __init__(self, impl):
        self._impl = impl

    def step(self):
        self._impl.step()

    def zero_grad(self, set_to_none=True):
        """Drops every parameter's gradient (PyTorch's default, set_to_none)."""
        self._impl.zero_grad()

    @property
    def lr(self):
        return self._impl.lr

    @lr.setter
    def lr(self, value):
        self._impl.lr = value

    def state_dict(self):
        """The optimizer's state tensors by name ("0.exp_avg", "0.exp_avg_sq", "steps", ...: the
        C++ optimizers' names), detached. ``ember.save(optimizer, path)`` writes them with the
        learning rate."""
        return {name: t.detach() for name, t in self._impl.state()}

    def load_state_dict(self, state_dict):
        """Copies the values in place into the optimizer's state (the same names and shapes:
        KeyError / ValueError otherwise, with nothing changed), and takes the learning rate from
        the metadata of a dict returned by ``ember.load`` when it has one."""
        own = dict(self._impl.state())
        if set(own) != set(state_dict):
            raise KeyError(f"load_state_dict: the optimizer's state is {sorted(own)}, the dict "
                           f"has {sorted(state_dict)}")
        for name, t in own.items():
            if tuple(state_dict[name].shape) != tuple(t.shape):
                raise ValueError(f"load_state_dict: '{name}' has shape "
                                 f"{tuple(state_dict[name].shape)}, the optimizer's has "
                                 f"{tuple(t.shape)}")
        from .. import no_grad
        with no_grad():
            for name, t in own.items():
                t.copy_(state_dict[name])
        lr = getattr(state_dict, "metadata", {}).get("lr")
        if lr is not None:
            self._impl.lr = float(lr)


class SGD(Optimizer):
    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        super().__init__(_optim.SGD(_params(params, "SGD"), lr, momentum, dampening,
                                    weight_decay, nesterov))


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(_optim.Adam(_params(params, "Adam"), lr, tuple(betas), eps,
                                     weight_decay))


class AdamW(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(_optim.AdamW(_params(params, "AdamW"), lr, tuple(betas), eps,
                                      weight_decay))


__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
