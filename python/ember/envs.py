"""ember's environments with Gymnasium's API: ``reset(seed=None, options=None) -> (obs, info)`` and
``step(action) -> (obs, reward, terminated, truncated, info)``, observations as NumPy float32
arrays. They run ember's C++ environments (the ones ``ember train`` learns on), so a seeded
episode here is the same, bit for bit, as in C++.

    env = ember.envs.LunarLander()
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(numpy.array([0.5, 0.0], numpy.float32))
"""
from typing import Any, Dict, Optional, Tuple

import numpy as _np

from . import _ember

__all__ = ["Box", "Discrete", "LunarLander"]


class Box:
    """Gymnasium's Box space: float32 values of ``shape`` between ``low`` and ``high``."""

    def __init__(self, low, high, shape, dtype=_np.float32):
        self.shape = tuple(shape)
        self.dtype = _np.dtype(dtype)
        self.low = _np.asarray(low, dtype=self.dtype).reshape(self.shape)
        self.high = _np.asarray(high, dtype=self.dtype).reshape(self.shape)

    def contains(self, x):
        x = _np.asarray(x)
        return (x.shape == self.shape and bool(_np.all(x >= self.low))
                and bool(_np.all(x <= self.high)))

    def sample(self, rng=None):
        """A uniform sample from ``rng`` (a numpy.random.Generator; a fresh one if None)."""
        rng = _np.random.default_rng() if rng is None else rng
        return rng.uniform(self.low, self.high).astype(self.dtype)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class Discrete:
    """Gymnasium's Discrete space: the integers 0 .. n - 1."""

    def __init__(self, n):
        self.n = int(n)
        self.shape = ()
        self.dtype = _np.dtype(_np.int64)

    def contains(self, x):
        return isinstance(x, (int, _np.integer)) and 0 <= x < self.n

    def sample(self, rng=None):
        rng = _np.random.default_rng() if rng is None else rng
        return int(rng.integers(self.n))

    def __repr__(self):
        return f"Discrete({self.n})"


def _space(d):
    if d["kind"] == "discrete":
        return Discrete(d["n"])
    return Box(d["low"], d["high"], d["shape"])


class LunarLander:
    """LunarLander-v3 (Gymnasium 1.4's, ported to C++ on Box2D 2.4), continuous by default.

    Observation: float32[8] (x, y, vx, vy, angle, angular velocity, left and right leg contact).
    Action (continuous): float32[2], clipped to [-1, 1]: main engine (fires when a0 > 0) and side
    engines (|a1| > 0.5). Action (continuous=False): an int in 0..3 (noop, left, main, right).
    Episodes are truncated after ``max_episode_steps`` steps.

    Errors: ValueError for an option out of range (gravity in (-12, 0), wind_power in [0, 20],
    turbulence_power in [0, 2]) and for an action of the wrong shape, NaN, or a discrete index out
    of range; RuntimeError for step() before reset() or after the episode ended.
    """

    metadata = {"render_modes": []}

    def __init__(self, continuous: bool = True, gravity: float = -10.0, enable_wind: bool = False,
                 wind_power: float = 15.0, turbulence_power: float = 1.5,
                 max_episode_steps: int = 1000):
        self._env = _ember._envs.LunarLander(bool(continuous), float(gravity), bool(enable_wind),
                                             float(wind_power), float(turbulence_power),
                                             int(max_episode_steps))
        self.continuous = bool(continuous)
        self.observation_space = _space(self._env.observation_space)
        self.action_space = _space(self._env.action_space)

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, Any]] = None) -> Tuple[_np.ndarray, Dict[str, Any]]:
        """Starts an episode: ``(observation, info)``. A seed reseeds the env's generator; without
        one the generator continues its stream. LunarLander takes no options."""
        if options:
            raise ValueError(f"LunarLander.reset: takes no options (got {sorted(options)})")
        if seed is not None and (not isinstance(seed, (int, _np.integer)) or
                                 isinstance(seed, (bool, _np.bool_)) or not 0 <= seed < 2**64):
            raise ValueError(f"LunarLander.reset: seed must be an int in [0, 2**64) (got {seed!r})")
        return self._env.reset(None if seed is None else int(seed)), {}

    def step(self, action) -> Tuple[_np.ndarray, float, bool, bool, Dict[str, Any]]:
        """One step: ``(observation, reward, terminated, truncated, info)``."""
        return (*self._env.step(self._action(action)), {})

    def _action(self, action):
        if self.continuous:
            a = _np.asarray(action, dtype=_np.float32)
            if a.shape != self.action_space.shape:
                raise ValueError(f"LunarLander.step: the action must have shape "
                                 f"{self.action_space.shape}, not {a.shape}")
            return a
        if isinstance(action, _np.ndarray) and action.shape != ():
            raise ValueError(f"LunarLander.step: a discrete action is one int, not an array of "
                             f"shape {action.shape}")
        if not isinstance(action, (int, _np.integer)) and not (
                isinstance(action, _np.ndarray) and action.dtype.kind in "iu"):
            raise ValueError(f"LunarLander.step: a discrete action is an int in 0..3, "
                             f"not {action!r}")
        return _np.asarray([action], dtype=_np.float32)

    @property
    def elapsed_steps(self):
        """Steps taken in the current episode."""
        return self._env.elapsed_steps

    def close(self):
        pass

    def __repr__(self):
        kind = "continuous" if self.continuous else "discrete"
        return f"<ember.envs.LunarLander ({kind})>"
