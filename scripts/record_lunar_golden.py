#!/usr/bin/env python3
"""Record LunarLander golden trajectories from Gymnasium for ember's env tests.

Gymnasium's generator is replaced by a recorded stream of unit doubles u (uniform(low, high) =
low + (high - low) * u, as NumPy and ember's StreamSource compute it) and of integers (wind
offsets). ember's test (tests/env/test_lunar_golden.cpp) replays the same streams and actions and
compares observations (docs/lunar_lander.md, "Acceptance": within 1e-3 for steps 0-20).

Usage (in a throwaway venv; box2d-py needs swig to build):
  python3 -m venv /tmp/gymvenv && /tmp/gymvenv/bin/pip install "gymnasium[box2d]"
  /tmp/gymvenv/bin/python scripts/record_lunar_golden.py tests/data/lunar_golden.json
"""
import json
import sys

import numpy as np
import gymnasium
from gymnasium.envs.box2d.lunar_lander import LunarLander

STEPS = 20  # observations for steps 0 (reset) .. STEPS
UNITS = 12 + 2 + 2 * (STEPS + 1) + 8  # terrain, force, dispersions (reset step included), spare


class StreamRNG:
    """Stands in for env.np_random: hands out the recorded stream and counts what was used."""

    def __init__(self, units, ints):
        self.units, self.ints = list(units), list(ints)
        self.units_used = self.ints_used = 0

    def _unit(self):
        u = self.units[self.units_used]
        self.units_used += 1
        return u

    def uniform(self, low=0.0, high=1.0, size=None):
        if size is None:
            return low + (high - low) * self._unit()
        count = int(np.prod(size))
        return np.array([low + (high - low) * self._unit() for _ in range(count)]).reshape(size)

    def integers(self, low, high=None, size=None):
        assert size is None and high is not None
        v = self.ints[self.ints_used]
        assert low <= v < high
        self.ints_used += 1
        return v


def record(name, continuous, enable_wind, actions, units, ints):
    env = LunarLander(continuous=continuous, enable_wind=enable_wind)
    rng = StreamRNG(units, ints)
    env._np_random = rng
    obs, _ = env.reset()
    observations, rewards, terminated = [obs.tolist()], [], []
    for a in actions:
        act = np.array(a, dtype=np.float32) if continuous else int(a[0])
        obs, reward, term, trunc, _ = env.step(act)
        observations.append(obs.tolist())
        rewards.append(float(reward))
        terminated.append(bool(term))
        if term:
            break
    env.close()
    return {
        "name": name,
        "continuous": continuous,
        "enable_wind": enable_wind,
        "units": [float(u) for u in units],
        "ints": [int(i) for i in ints],
        "actions": [[float(x) for x in np.atleast_1d(a)] for a in actions[: len(rewards)]],
        "observations": observations,
        "rewards": rewards,
        "terminated": terminated,
        "units_used": rng.units_used,
        "ints_used": rng.ints_used,
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/lunar_golden.json"
    cases = []
    scripted = lambda seed: np.random.default_rng(seed).uniform(-1, 1, (STEPS, 2)).astype(np.float32)
    units = lambda seed: np.random.default_rng(seed).random(UNITS)
    cases.append(record("continuous_scripted", True, False, scripted(1), units(100), []))
    cases.append(record("continuous_zero", True, False, np.zeros((STEPS, 2), np.float32), units(101), []))
    # Mostly main engine with side bursts: the lander climbs and turns, so the legs swing.
    thrust = np.tile(np.array([[1.0, 0.0], [0.8, 0.9], [0.6, -0.7], [1.0, 0.6]], np.float32), (STEPS // 4, 1))
    cases.append(record("continuous_thrust", True, False, thrust, units(102), []))
    discrete = np.random.default_rng(2).integers(0, 4, STEPS)
    cases.append(record("discrete_scripted", False, False, [[float(a)] for a in discrete], units(103), []))
    wind_ints = np.random.default_rng(104).integers(-9999, 9999, 2)
    cases.append(record("continuous_wind", True, True, scripted(3), units(105), wind_ints))
    doc = {
        "source": f"gymnasium {gymnasium.__version__} LunarLander, scripts/record_lunar_golden.py",
        "note": "observations[0] is the reset observation; observations[k] follows actions[k-1]",
        "cases": cases,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
