"""PPO on LunarLander (continuous), ember's C++ trainer called from Python: the same run as
``ember train`` (docs/training.md), with the same settings, seeds and records.

    result = ember.ppo.train(ember.ppo.TrainConfig(seed=3, max_transitions=100_000))
    for r in result.records:        # one dict per epoch, epochs.jsonl's fields
        print(r["epoch"], r["transitions"], r["loss"], r["train_return_mean"], r["eval_mean"])

From the shell, with ``ember train``'s option names: ``python -m ember.ppo --max-transitions N``.
The run releases the GIL; on the main thread, Ctrl-C stops it cleanly (stop_reason
"interrupted"), as it stops ``ember train``.
"""
import dataclasses as _dataclasses
import json as _json
import math as _math
import threading as _threading
from typing import Any, Dict, List, Optional, Union

import numpy as _np

from .. import _ember

__all__ = ["TrainConfig", "TrainResult", "train", "check"]

# The C++ defaults (ember/rl/train_config.h), and the section of run.json's "config" that holds
# each setting ("" for the top level). Facts fixed by the workload are not settings here.
_CPP_DEFAULTS = _json.loads(_ember._ppo.default_config())
_FIXED = {"transitions_per_epoch", "activation", "init", "optimizer", "obs_dim", "act_dim",
          "check_replicas"}
_SECTION = {}
for _key, _value in _CPP_DEFAULTS.items():
    if isinstance(_value, dict):
        _SECTION.update({k: _key for k in _value if k not in _FIXED})
    elif _key not in _FIXED:
        _SECTION[_key] = ""
_DEFAULTS = {k: (_CPP_DEFAULTS[s][k] if s else _CPP_DEFAULTS[k]) for k, s in _SECTION.items()}


@_dataclasses.dataclass
class TrainConfig:
    """Every setting of ``ember train``, named as its options (``--max-transitions`` is
    ``max_transitions``; ``--out`` is ``out_dir``; the flags ``--no-jit``, ``--no-reward-scaling``,
    ``--no-adv-norm`` and ``--global-grad-clip`` are ``jit``, ``reward_scaling``,
    ``normalize_advantages`` and ``separate_grad_clip`` set to False). The defaults are the C++
    trainer's, except that ``out_dir`` empty writes no files. ``ember train --help`` and
    docs/training.md describe each."""
    # Run
    seed: int = _DEFAULTS["seed"]
    threads: int = _DEFAULTS["threads"]
    env_threads: int = _DEFAULTS["env_threads"]
    out_dir: str = _DEFAULTS["out_dir"]
    resume: str = _DEFAULTS["resume"]  # C++ only: train() refuses it (ember train --resume)
    max_transitions: int = _DEFAULTS["max_transitions"]
    target: float = _DEFAULTS["target"]
    checkpoint_every: int = _DEFAULTS["checkpoint_every"]
    progress: str = _DEFAULTS["progress"]
    jit: bool = _DEFAULTS["jit"]
    # Workload
    envs: int = _DEFAULTS["envs"]
    steps_per_env: int = _DEFAULTS["steps_per_env"]
    max_episode_steps: int = _DEFAULTS["max_episode_steps"]
    eval_every: int = _DEFAULTS["eval_every"]
    eval_envs: int = _DEFAULTS["eval_envs"]
    eval_episodes_per_env: int = _DEFAULTS["eval_episodes_per_env"]
    final_eval_episodes_per_env: int = _DEFAULTS["final_eval_episodes_per_env"]
    # Networks
    hidden: int = _DEFAULTS["hidden"]
    layers: int = _DEFAULTS["layers"]
    log_std_init: float = _DEFAULTS["log_std_init"]
    hidden_gain: float = _DEFAULTS["hidden_gain"]
    actor_output_gain: float = _DEFAULTS["actor_output_gain"]
    critic_output_gain: float = _DEFAULTS["critic_output_gain"]
    # Algorithm
    lr: float = _DEFAULTS["lr"]
    adam_eps: float = _DEFAULTS["adam_eps"]
    adam_beta1: float = _DEFAULTS["adam_beta1"]
    adam_beta2: float = _DEFAULTS["adam_beta2"]
    gamma: float = _DEFAULTS["gamma"]
    gae_lambda: float = _DEFAULTS["gae_lambda"]
    clip: float = _DEFAULTS["clip"]
    value_coef: float = _DEFAULTS["value_coef"]
    entropy_coef: float = _DEFAULTS["entropy_coef"]
    max_grad_norm: float = _DEFAULTS["max_grad_norm"]
    separate_grad_clip: bool = _DEFAULTS["separate_grad_clip"]
    passes: int = _DEFAULTS["passes"]
    minibatch: int = _DEFAULTS["minibatch"]
    reward_scaling: bool = _DEFAULTS["reward_scaling"]
    normalize_advantages: bool = _DEFAULTS["normalize_advantages"]

    def to_json(self):
        """The settings as run.json's "config" nests them (what the C++ trainer reads)."""
        j = {}
        for key, section in _SECTION.items():
            v = getattr(self, key)
            if isinstance(v, _np.generic):
                v = v.item()  # a NumPy scalar as the Python value json writes
            (j.setdefault(section, {}) if section else j)[key] = v
        return j


class TrainResult:
    """What a run returns (ember/rl/trainer.h's TrainResult): ``records`` (one dict per epoch,
    with epochs.jsonl's fields: epoch, transitions, loss, policy_loss, value_loss, entropy,
    approx_kl, clip_fraction, train_return_mean, eval_mean, the timings, ...), ``curve`` (the
    evaluations: epoch, transitions, mean, std), ``reached_target``, ``stop_reason``
    ("target", "max_transitions" or "interrupted"), ``epochs``, ``transitions_at_stop``,
    ``seconds_to_stop`` (from process start), ``last_eval_mean``, ``saved_policy_eval`` and,
    when out_dir was set, the paths of the files written (``out_dir``, ``policy_path``,
    ``checkpoint_path``, ``plot_path``, ``records_path``)."""

    records: List[Dict[str, Any]]
    curve: List[Dict[str, Any]]
    reached_target: bool
    stop_reason: str
    epochs: int
    transitions_at_stop: int
    seconds_to_stop: float
    last_eval_mean: float
    saved_policy_eval: Dict[str, Any]
    out_dir: str
    policy_path: str
    checkpoint_path: str
    plot_path: str
    records_path: str

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (f"<TrainResult {self.stop_reason}: {self.epochs} epochs, "
                f"{self.transitions_at_stop} transitions, last eval {self.last_eval_mean:.2f}>")


def _check_types(config):
    """TypeError or ValueError naming a setting whose value is not of its field's kind (the C++
    trainer checks the ranges)."""
    for f in _dataclasses.fields(TrainConfig):
        v = getattr(config, f.name)
        kind = type(f.default)
        if kind is bool:
            ok = isinstance(v, (bool, _np.bool_))
        elif kind is int:
            ok = isinstance(v, (int, _np.integer)) and not isinstance(v, (bool, _np.bool_))
            if ok and not -2**63 <= int(v) < 2**63:
                raise ValueError(f"{f.name} must be an int within 64 bits (got {v!r})")
        elif kind is float:
            ok = isinstance(v, (int, float, _np.integer, _np.floating)) and \
                not isinstance(v, (bool, _np.bool_))
            if ok and not _math.isfinite(float(v)):
                raise ValueError(f"{f.name} must be a finite number (got {v!r})")
        else:
            ok = isinstance(v, kind)
        if not ok:
            name = {bool: "a bool", int: "an int", float: "a number", str: "a str"}[kind]
            raise TypeError(f"{f.name} must be {name}, not {type(v).__name__} ({v!r})")
    if config.resume:
        raise ValueError("resume is not supported from Python (a resumed run takes the "
                         "checkpoint's settings); run `ember train --resume DIR`")


def _config(config, settings):
    if config is None:
        config = TrainConfig()
    elif isinstance(config, dict):
        config = TrainConfig(**config)
    elif not isinstance(config, TrainConfig):
        raise TypeError(f"train: expects a TrainConfig or a dict, not {type(config).__name__}")
    config = _dataclasses.replace(config, **settings) if settings else config
    _check_types(config)
    return config


def check(config: Optional[Union["TrainConfig", Dict[str, Any]]] = None,
          **settings: Any) -> None:
    """What a run needs before it writes anything (ember::rl::Trainer::check): valid settings
    (ValueError naming the first bad one) and a C compiler for the kernels."""
    _ember._ppo.check(_json.dumps(_config(config, settings).to_json()))


def train(config: Optional[Union["TrainConfig", Dict[str, Any]]] = None,
          **settings: Any) -> "TrainResult":
    """Runs PPO to the target or max_transitions as ``ember train`` does; returns a TrainResult.

    ``config``: a TrainConfig (or a dict of its fields); ``settings`` override its fields
    (``train(seed=3, max_transitions=40_000)``). ValueError (or TypeError, for a value of the
    wrong type) names a bad setting; OSError a file that cannot be written. ``resume`` is not
    supported here (ValueError): ``ember train --resume DIR`` continues a run.
    """
    config = _config(config, settings)
    on_main = _threading.current_thread() is _threading.main_thread()
    out = _ember._ppo.train(_json.dumps(config.to_json()), on_main)
    return TrainResult(_json.loads(out))
