"""``python -m ember.ppo``: ``ember train`` from Python, with its option names (``--help`` lists
them): PPO on LunarLander to a target evaluation mean or --max-transitions, records under --out
(default runs/<timestamp>, as ``ember train``)."""
import argparse
import dataclasses
import os
import sys
import time

from . import TrainConfig, check, train

# ember train's option for each setting where it is not --<setting with dashes>; flags that turn
# a setting off.
_OPTION = {"out_dir": "--out"}
_OFF_FLAGS = {"jit": "--no-jit", "reward_scaling": "--no-reward-scaling",
              "normalize_advantages": "--no-adv-norm", "separate_grad_clip": "--global-grad-clip"}
_NOT_OPTIONS = {"resume"}  # ember train's --resume takes the checkpoint's settings: C++ only


def parser():
    p = argparse.ArgumentParser(
        prog="python -m ember.ppo",
        description="Train a PPO agent on LunarLander (continuous), as `ember train` does "
                    "(`ember train --help` describes each option).")
    for f in dataclasses.fields(TrainConfig):
        if f.name in _NOT_OPTIONS:
            continue
        if f.name in _OFF_FLAGS:
            p.add_argument(_OFF_FLAGS[f.name], dest=f.name, action="store_false")
            continue
        option = _OPTION.get(f.name, "--" + f.name.replace("_", "-"))
        p.add_argument(option, dest=f.name, type=type(f.default), default=f.default,
                       metavar=type(f.default).__name__.upper(),
                       help=f"(default: {f.default!r})" if f.default != "" else None)
    return p


def run_dir():
    """A new directory runs/<timestamp>[-N], as ember train makes one."""
    base = time.strftime("runs/%Y%m%d-%H%M%S")
    os.makedirs("runs", exist_ok=True)
    for i in range(1, 10000):
        d = base if i == 1 else f"{base}-{i}"
        try:
            os.mkdir(d)
            return d
        except FileExistsError:
            continue
    raise OSError(f"cannot find a free output directory next to '{base}'")


def main(argv=None):
    args = parser().parse_args(argv)
    config = TrainConfig(**vars(args))
    try:
        check(config)  # before a directory is made: a bad run leaves none
        if not config.out_dir:
            config.out_dir = run_dir()
        r = train(config)
    except (ValueError, OSError) as e:
        print(f"python -m ember.ppo: {e}", file=sys.stderr)
        return 2
    if r.stop_reason == "interrupted":
        print(f"\nInterrupted after {r.epochs} epochs ({r.transitions_at_stop} transitions); "
              f"saved under {r.out_dir}")
        return 130
    s = r.saved_policy_eval
    print(f"\n{'Reached the target' if r.reached_target else 'Stopped at --max-transitions'} "
          f"after {r.transitions_at_stop} transitions ({r.epochs} epochs), "
          f"{r.seconds_to_stop:.2f} s from process start")
    print(f"last scheduled evaluation: {r.last_eval_mean:.2f}; saved-policy evaluation: "
          f"{s['mean']:.2f} +- {s['std']:.2f} over {s['episodes']} episodes")
    print(f"records:    {r.out_dir}/run.json, {r.out_dir}/summary.json, {r.records_path}")
    print(f"policy:     {r.policy_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
