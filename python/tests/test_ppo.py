"""ember.ppo: a Python run (ember.ppo.train and `python -m ember.ppo`) writes the same per-epoch
losses, returns and transition counts as `ember train` (the reference: the built command, found
through EMBER_CLI, which ctest sets) for the same seed and settings; only timings differ."""
import json
import os
import subprocess
import sys
import threading
import time

import pytest

import ember
from ember.ppo import TrainConfig, train

# A tiny run: 2 epochs of 200 transitions, an evaluation after each, short episodes.
ARGS = ["--seed", "3", "--max-transitions", "400", "--envs", "2", "--steps-per-env", "100",
        "--minibatch", "100", "--passes", "2", "--eval-every", "1", "--eval-envs", "1",
        "--eval-episodes-per-env", "1", "--final-eval-episodes-per-env", "1", "--hidden", "16",
        "--layers", "2", "--max-episode-steps", "60", "--progress", "none", "--threads", "2"]
CONFIG = TrainConfig(seed=3, max_transitions=400, envs=2, steps_per_env=100, minibatch=100,
                     passes=2, eval_every=1, eval_envs=1, eval_episodes_per_env=1,
                     final_eval_episodes_per_env=1, hidden=16, layers=2, max_episode_steps=60,
                     progress="none", threads=2)
# What the training computes (the timings and the kernel-cache counters differ between runs).
TRAINING_FIELDS = ["epoch", "transitions", "loss", "policy_loss", "value_loss", "entropy",
                   "approx_kl", "clip_fraction", "explained_variance", "actor_grad_norm",
                   "critic_grad_norm", "action_std", "optimizer_steps", "train_episodes",
                   "train_return_mean", "truncations", "reward_scale", "eval_mean", "eval_std",
                   "eval_episodes"]


def training_values(records):
    return [{k: r[k] for k in TRAINING_FIELDS} for r in records]


def read_records(out_dir):
    with open(os.path.join(out_dir, "epochs.jsonl")) as f:
        return [json.loads(line) for line in f]


def run_module(*args, cwd=None):
    """python -m ember.ppo ARGS, importing the ember this test imports."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    env = {**os.environ, "PYTHONPATH": package_root}
    return subprocess.run([sys.executable, "-m", "ember.ppo", *args], capture_output=True,
                          text=True, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def cpp_records(tmp_path_factory):
    cli = os.environ.get("EMBER_CLI")
    if not cli:
        pytest.skip("EMBER_CLI (the ember command, set by ctest) is not set")
    out = tmp_path_factory.mktemp("cpp") / "run"
    subprocess.run([cli, "train", *ARGS, "--out", str(out)], check=True, capture_output=True)
    records = read_records(out)
    assert [r["transitions"] for r in records] == [200, 400]
    return records


def test_python_m_ember_ppo_writes_ember_trains_records(cpp_records, tmp_path):
    out = tmp_path / "run"
    done = run_module(*ARGS, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Stopped at --max-transitions after 400 transitions" in done.stdout
    assert training_values(read_records(out)) == training_values(cpp_records)


def test_train_returns_the_records_it_writes(cpp_records, tmp_path):
    result = train(CONFIG, out_dir=str(tmp_path / "run"))
    assert result.stop_reason == "max_transitions" and not result.reached_target
    assert result.epochs == 2 and result.transitions_at_stop == 400
    assert result.records == read_records(tmp_path / "run")
    assert training_values(result.records) == training_values(cpp_records)
    assert [p["transitions"] for p in result.curve] == [200, 400]
    assert result.saved_policy_eval["episodes"] == 1
    assert os.path.exists(result.policy_path)


def test_train_without_out_dir_writes_nothing_and_takes_dicts_and_overrides(tmp_path,
                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = train({**vars(CONFIG), "seed": 4}, passes=1)
    assert os.listdir(tmp_path) == [] and result.out_dir == ""
    assert [r["optimizer_steps"] for r in result.records] == [2, 2]


def test_config_has_every_setting_with_the_cpp_defaults():
    from ember.ppo import _DEFAULTS
    c = TrainConfig()
    assert {f: getattr(c, f) for f in _DEFAULTS} == _DEFAULTS
    assert set(vars(c)) == set(_DEFAULTS)
    assert c.max_transitions == 1_000_000 and c.envs == 4 and c.steps_per_env == 5000


def test_bad_settings_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="minibatch"):
        train(CONFIG, minibatch=3)
    with pytest.raises(TypeError):
        train(CONFIG, no_such_setting=1)
    done = run_module("--envs", "0", cwd=tmp_path)
    assert done.returncode == 2 and "envs must be >= 1" in done.stderr
    assert os.listdir(tmp_path) == []  # checked before runs/<timestamp> is made


def test_training_releases_the_gil():
    ticks = 0
    result = []
    worker = threading.Thread(target=lambda: result.append(train(CONFIG)))
    worker.start()
    t0 = time.perf_counter()
    while worker.is_alive():
        ticks += 1  # pure Python: needs the GIL
    seconds = time.perf_counter() - t0
    worker.join()
    assert result[0].epochs == 2
    # A GIL held for the whole run would leave this loop a handful of iterations.
    assert seconds < 0.05 or ticks > 1000, (ticks, seconds)


def test_exported():
    assert ember.ppo.train is train


@pytest.mark.parametrize("setting, value, error, message", [
    ("lr", float("nan"), ValueError, "lr must be a finite number"),
    ("gamma", float("inf"), ValueError, "gamma must be a finite number"),
    ("max_transitions", "100", TypeError, "max_transitions must be an int"),
    ("max_transitions", True, TypeError, "max_transitions must be an int"),
    ("max_transitions", 1.5, TypeError, "max_transitions must be an int"),
    ("max_transitions", 2**64, ValueError, "max_transitions must be an int within 64 bits"),
    ("seed", None, TypeError, "seed must be an int"),
    ("jit", 1, TypeError, "jit must be a bool"),
    ("progress", 3, TypeError, "progress must be a str"),
])
def test_settings_of_the_wrong_type_name_the_setting(setting, value, error, message):
    for call in (train, ember.ppo.check):
        with pytest.raises(error, match=message):
            call(CONFIG, **{setting: value})


def test_resume_is_refused_and_points_to_ember_train(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="ember train --resume"):
        train(CONFIG, resume=str(tmp_path))
    assert os.listdir(tmp_path) == []
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    done = run_module(*ARGS, "--out", str(tmp_path / "taken"), cwd=tmp_path)
    assert done.returncode == 2 and "`ember train --resume" in done.stderr, done.stderr
