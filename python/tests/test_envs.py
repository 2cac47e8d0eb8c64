"""ember.envs.LunarLander: Gymnasium's signatures over the C++ env, whose seeded episodes it must
reproduce bit for bit (the reference: the C++ API's own episode, _envs._cpp_episode)."""
import math
import threading

import numpy as np
import pytest

import ember
from ember import _ember
from ember.envs import Box, Discrete, LunarLander


def scripted_actions(steps, seed=7):
    return np.random.default_rng(seed).uniform(-1, 1, size=(steps, 2)).astype(np.float32)


def play(env, seed, actions):
    obs, info = env.reset(seed=seed)
    assert info == {}
    observations, rewards, terminated, truncated = [obs], [], [], []
    for a in actions:
        obs, reward, term, trunc, info = env.step(a)
        assert info == {}
        observations.append(obs)
        rewards.append(reward)
        terminated.append(term)
        truncated.append(trunc)
        if term or trunc:
            break
    return np.stack(observations), rewards, terminated, truncated


@pytest.mark.parametrize("seed", [0, 5])
def test_seeded_episode_equals_the_cpp_envs(seed):
    actions = scripted_actions(400, seed)
    obs, rewards, terminated, truncated = play(LunarLander(), seed, actions)
    ref_obs, ref_rewards, ref_term, ref_trunc = _ember._envs._cpp_episode(seed, actions)
    assert obs.dtype == np.float32 and obs.shape == (len(rewards) + 1, 8)
    assert obs.tobytes() == np.asarray(ref_obs, dtype=np.float32).tobytes()  # bitwise
    assert rewards == ref_rewards and terminated == ref_term and truncated == ref_trunc
    assert len(rewards) > 20  # a real episode, not an empty comparison


def test_discrete_episode_equals_the_cpp_envs():
    actions = np.random.default_rng(3).integers(0, 4, size=300)
    obs, rewards, terminated, _ = play(LunarLander(continuous=False), 11, [int(a) for a in actions])
    ref_obs, ref_rewards, ref_term, _ = _ember._envs._cpp_episode(
        11, actions.astype(np.float32).reshape(-1, 1), continuous=False)
    assert obs.tobytes() == np.asarray(ref_obs, dtype=np.float32).tobytes()
    assert rewards == ref_rewards and terminated == ref_term


def test_same_seed_same_episode_and_unseeded_reset_continues_the_stream():
    env = LunarLander()
    first, _ = env.reset(seed=3)
    again, _ = env.reset(seed=3)
    assert first.tobytes() == again.tobytes()
    following, _ = env.reset()
    assert following.tobytes() != first.tobytes()
    other = LunarLander()
    other.reset(seed=3)
    assert other.reset()[0].tobytes() == following.tobytes()


def test_spaces_describe_the_continuous_env():
    env = LunarLander()
    assert isinstance(env.observation_space, Box) and env.observation_space.shape == (8,)
    assert env.observation_space.dtype == np.float32
    assert np.allclose(env.observation_space.low[:4], [-2.5, -2.5, -10, -10])
    assert env.observation_space.high[4] == np.float32(2 * math.pi)
    assert isinstance(env.action_space, Box) and env.action_space.shape == (2,)
    assert env.action_space.low.tolist() == [-1, -1] and env.action_space.high.tolist() == [1, 1]
    assert env.action_space.contains(env.action_space.sample(np.random.default_rng(0)))
    assert isinstance(LunarLander(continuous=False).action_space, Discrete)
    assert LunarLander(continuous=False).action_space.n == 4


def test_observations_are_fresh_float32_arrays():
    env = LunarLander()
    obs, _ = env.reset(seed=1)
    nxt = env.step([0.0, 0.0])[0]
    assert obs.dtype == np.float32 and nxt.dtype == np.float32 and obs.shape == (8,)
    assert not np.shares_memory(obs, nxt)


def test_truncates_at_the_time_limit():
    env = LunarLander(max_episode_steps=5)
    env.reset(seed=2)
    flags = [env.step(np.zeros(2, np.float32))[2:4] for _ in range(5)]
    assert flags[:4] == [(False, False)] * 4 and flags[4] == (False, True)
    assert env.elapsed_steps == 5


@pytest.mark.parametrize("action", [[0.0], [0.0, 0.0, 0.0], [[0.0, 0.0]], [0.0, float("nan")]])
def test_bad_actions_raise_value_error(action):
    env = LunarLander()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(np.asarray(action, dtype=np.float32))
    env.step(np.zeros(2, np.float32))  # the env is still usable


@pytest.mark.parametrize("action", [4, -1, 1.5, np.array([1, 2])])
def test_bad_discrete_actions_raise_value_error(action):
    env = LunarLander(continuous=False)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(action)


def test_bad_options_and_state_errors():
    with pytest.raises(ValueError, match="gravity"):
        LunarLander(gravity=-20.0)
    env = LunarLander()
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2, np.float32))  # before reset
    with pytest.raises(ValueError):
        env.reset(seed=1, options={"x": 1})
    env.reset(seed=1)
    for _ in range(2000):
        if any(env.step(np.array([-1.0, 0.0], np.float32))[2:4]):
            break
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2, np.float32))  # after the episode ended


def test_env_is_exported():
    assert ember.envs.LunarLander is LunarLander


def test_bad_seeds_raise_value_error():
    env = LunarLander()
    for seed in (-1, 2**64, 1.5, "1", True):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
    env.reset(seed=2**64 - 1)


def test_two_threads_on_one_env_are_serialised():
    # Box2D's world is not thread-safe: step and reset hold the GIL, so two threads sharing an
    # env take turns (before, they ran Box2D at once and aborted the interpreter).
    env = LunarLander(max_episode_steps=40)
    env.reset(seed=1)
    observations, errors = [], []

    def stepper():
        for _ in range(400):
            try:
                obs, _, term, trunc, _ = env.step(np.array([0.5, 0.0], np.float32))
                observations.append(obs)
                if term or trunc:
                    env.reset()
            except RuntimeError:  # the other thread ended the episode: start the next
                env.reset()
            except BaseException as e:  # noqa: BLE001 -- reported by the main thread
                errors.append(e)

    threads = [threading.Thread(target=stepper) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(observations) > 400 and np.isfinite(np.stack(observations)).all()


def test_two_envs_in_two_threads_play_their_serial_episodes():
    actions = scripted_actions(300)
    expected = [play(LunarLander(), seed, actions) for seed in (2, 3)]
    got = [None, None]

    def run(i):
        got[i] = play(LunarLander(), (2, 3)[i], actions)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g[0], e[0])
        assert g[1:] == e[1:]
