"""Gymnasium's side of `ember env --action-noise`: plays LunarLanderContinuous-v3 with Gymnasium's
reference heuristic plus N(0, sigma^2) noise on every action (then clipped to [-1, 1]) and prints
the same statistics, to compare how long landers take to come to rest in ember's env (Box2D 2.4)
and in Gymnasium's (box2d 2.3.10). Not part of `make test`; needs `pip install "gymnasium[box2d]"`.

    python scripts/gym_lander_noise.py --episodes 1000 --action-noise 0.3
    build/release/apps/ember env --episodes 1000 --action-noise 0.3
"""
import argparse

import gymnasium as gym
import numpy as np
from gymnasium.envs.box2d.lunar_lander import heuristic


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--action-noise", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    env = gym.make("LunarLander-v3", continuous=True)
    rng = np.random.default_rng(a.seed)
    returns, lengths, sleeps = [], [], 0
    for episode in range(a.episodes):
        obs, _ = env.reset(seed=a.seed + episode)
        total, n = 0.0, 0
        while True:
            action = np.asarray(heuristic(env.unwrapped, obs), dtype=np.float64)
            action = np.clip(action + a.action_noise * rng.normal(size=2), -1, 1)
            obs, reward, terminated, truncated, _ = env.step(action.astype(np.float32))
            total, n = total + reward, n + 1
            if terminated or truncated:
                sleeps += bool(terminated and not env.unwrapped.lander.awake)
                break
        returns.append(total)
        lengths.append(n)
    print(f"action noise: N(0, {a.action_noise}^2), clipped")
    print(f"return: mean {np.mean(returns):.2f} std {np.std(returns):.2f} count {len(returns)}")
    print(f"length: mean {np.mean(lengths):.1f}")
    print(f"ended by sleeping: {100.0 * sleeps / len(returns):.1f}%")


if __name__ == "__main__":
    main()
