#!/usr/bin/env python3
"""The study's PPO trainer as a Python user runs it: PyTorch on Gymnasium's LunarLanderContinuous-v3.

Protocol and settings as `ember train` (docs/training.md; rl::TrainConfig defaults): 4 envs, 5,000 vector
steps per epoch (20,000 transitions), 20 passes in shuffled minibatches of 10,000, gamma 0.999,
GAE lambda 0.95, reward scaling by the running std of each env's discounted return (Engstrom et al.
2020; Gymnasium's NormalizeReward statistics, shared by the 4 envs as in rl::RewardScaler), the
networks and step of torch_policy.py. A time-limit truncation bootstraps from the value of the true
final observation; a termination does not. Episodes continue across epochs. Evaluation every 5th
epoch (epoch 0 included) on 4 fresh eval envs x 25 complete episodes, stochastic actions clipped to
[-1, 1]. Stops at a scheduled evaluation mean >= 200; the clock runs from process start. Then the
policy is saved, loaded into a fresh model and evaluated on 100 fresh episodes.

Prints one JSON line per epoch (the keys of bench/study/torch_ppo.cpp) and a summary line.
A benchmark reference, not a test.
"""
import time

T_START = time.perf_counter()  # the clock starts at process start, imports included

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from torch_policy import ActorCritic, PpoStep  # noqa: E402

ENV_ID = "LunarLanderContinuous-v3"


def now():
    return time.perf_counter() - T_START


class RewardScaler:
    """r / sqrt(var(R) + eps) with R <- gamma R + r per env, reset at episode end (rl::RewardScaler)."""

    def __init__(self, envs, gamma, eps=1e-8):
        self.gamma, self.eps = gamma, eps
        self.returns = np.zeros(envs)
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4

    def __call__(self, rewards, done):
        self.returns = self.returns * self.gamma + rewards
        b_mean, b_var, b_count = self.returns.mean(), self.returns.var(), len(self.returns)
        delta, total = b_mean - self.mean, self.count + b_count
        m2 = self.var * self.count + b_var * b_count + delta ** 2 * self.count * b_count / total
        self.mean, self.var, self.count = self.mean + delta * b_count / total, m2 / total, total
        scaled = rewards / np.sqrt(self.var + self.eps)
        self.returns[done] = 0.0
        return scaled.astype(np.float32)


def evaluate(ac, envs, episodes_per_env, seed):
    """Mean return of envs x episodes_per_env complete episodes on fresh envs, stochastic actions."""
    t0 = now()
    pool = [gym.make(ENV_ID) for _ in range(envs)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(pool)]).astype(np.float32)
    done_eps = [0] * envs
    ret = np.zeros(envs)
    returns = []
    std = ac.log_std.detach().exp()
    while min(done_eps) < episodes_per_env:
        with torch.no_grad():
            mean = ac.actor(torch.from_numpy(obs))
            act = (mean + std * torch.randn_like(mean)).clamp(-1, 1).numpy()
        for i, e in enumerate(pool):
            if done_eps[i] >= episodes_per_env:
                continue
            o, r, term, trunc, _ = e.step(act[i])
            ret[i] += r
            if term or trunc:
                returns.append(ret[i])
                ret[i] = 0.0
                done_eps[i] += 1
                o, _ = e.reset()
            obs[i] = o
    for e in pool:
        e.close()
    return float(np.mean(returns)), now() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-transitions", type=int, default=1_000_000)
    ap.add_argument("--steps-per-env", type=int, default=5000)
    ap.add_argument("--minibatch", type=int, default=10000)
    ap.add_argument("--passes", type=int, default=20)
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--eval-episodes-per-env", type=int, default=25)
    ap.add_argument("--final-eval-episodes-per-env", type=int, default=25, help="the saved-policy evaluation")
    ap.add_argument("--target", type=float, default=200.0)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    n_envs, gamma, lam = 4, 0.999, 0.95
    n = a.steps_per_env * n_envs
    if min(a.steps_per_env, a.minibatch, a.passes, a.eval_every, a.eval_episodes_per_env,
           a.final_eval_episodes_per_env) <= 0 or n % a.minibatch:
        ap.error("sizes must be positive and the minibatch must divide steps-per-env x 4")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    ac = ActorCritic()
    step = PpoStep(ac)
    envs = [gym.make(ENV_ID) for _ in range(n_envs)]
    obs = np.stack([e.reset(seed=1000 * a.seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    scaler = RewardScaler(n_envs, gamma)
    T = a.steps_per_env
    b_obs = np.zeros((T, n_envs, 8), np.float32)
    b_act = np.zeros((T, n_envs, 2), np.float32)
    b_logp = np.zeros((T, n_envs), np.float32)
    b_rew = np.zeros((T, n_envs), np.float32)
    b_term = np.zeros((T, n_envs), bool)
    b_trunc = np.zeros((T, n_envs), bool)
    b_final = np.zeros((T, n_envs, 8), np.float32)  # the true final observation of a truncated step
    transitions, reached, seconds_to_stop = 0, False, 0.0
    for epoch in range(10 ** 9):
        e0 = now()
        t_inf = t_smp = t_env = t_buf = 0.0
        std = ac.log_std.detach().exp()
        for t in range(T):
            s0 = now()
            with torch.no_grad():
                mean = ac.actor(torch.from_numpy(obs))
            s1 = now()
            with torch.no_grad():
                act = mean + std * torch.randn_like(mean)
                logp = (-0.5 * ((act - mean) / std).square() - ac.log_std - 0.5 * np.log(2 * np.pi)).sum(1)
            act_np = act.numpy()
            clipped = np.clip(act_np, -1.0, 1.0)
            s2 = now()
            nxt = np.empty_like(obs)
            rew = np.empty(n_envs)
            term = np.zeros(n_envs, bool)
            trunc = np.zeros(n_envs, bool)
            for i, e in enumerate(envs):
                o, rew[i], term[i], trunc[i], _ = e.step(clipped[i])
                if term[i] or trunc[i]:
                    b_final[t, i] = o
                    o, _ = e.reset()
                nxt[i] = o
            s3 = now()
            b_obs[t], b_act[t], b_logp[t] = obs, act_np, logp.numpy()
            b_rew[t] = scaler(rew, term | trunc)
            b_term[t], b_trunc[t] = term, trunc
            obs = nxt
            s4 = now()
            t_inf += s1 - s0
            t_smp += s2 - s1
            t_env += s3 - s2
            t_buf += s4 - s3
        collect_s = now() - e0
        transitions += n
        rec = {"kind": "epoch", "impl": "pytorch-gymnasium", "epoch": epoch, "transitions": transitions,
               "collect_s": collect_s, "collect_inference_s": t_inf, "collect_sampling_s": t_smp,
               "collect_env_s": t_env, "collect_buffer_s": t_buf}
        ev = None
        if epoch % a.eval_every == 0:
            ev, rec["eval_s"] = evaluate(ac, 4, a.eval_episodes_per_env, 10 ** 6 * a.seed + 7919 * epoch)
        else:
            rec["eval_s"] = 0.0
        rec["eval_mean"] = ev
        stop_target = ev is not None and ev >= a.target
        update_s = 0.0
        if not stop_target:
            u0 = now()
            with torch.no_grad():
                values = ac.critic(torch.from_numpy(b_obs.reshape(-1, 8))).reshape(T, n_envs).numpy()
                final_v = ac.critic(torch.from_numpy(b_final.reshape(-1, 8))).reshape(T, n_envs).numpy()
                last_v = ac.critic(torch.from_numpy(obs)).reshape(-1).numpy()
            adv = np.zeros((T, n_envs), np.float32)
            gae = np.zeros(n_envs, np.float32)
            for t in reversed(range(T)):
                next_v = last_v if t == T - 1 else values[t + 1]
                next_v = np.where(b_trunc[t], final_v[t], np.where(b_term[t], 0.0, next_v))
                delta = b_rew[t] + gamma * next_v - values[t]
                gae = delta + gamma * lam * np.where(b_term[t] | b_trunc[t], 0.0, gae)
                adv[t] = gae
            ret = adv + values
            u1 = now()
            f_obs, f_act = torch.from_numpy(b_obs.reshape(-1, 8)), torch.from_numpy(b_act.reshape(-1, 2))
            f_logp, f_adv, f_ret = (torch.from_numpy(x.reshape(-1)) for x in (b_logp, adv, ret.astype(np.float32)))
            steps_s = 0.0
            for _ in range(a.passes):
                perm = torch.randperm(n)
                for s in range(0, n, a.minibatch):
                    idx = perm[s:s + a.minibatch]
                    s0 = now()
                    step(f_obs[idx], f_act[idx], f_logp[idx], f_adv[idx], f_ret[idx])
                    steps_s += now() - s0
            update_s = now() - u0
            rec["update_policy_outputs_s"] = u1 - u0
            rec["update_steps_s"] = steps_s
        rec["update_s"] = update_s
        rec["epoch_s"] = now() - e0
        rec["elapsed_s"] = now()
        print(json.dumps(rec), flush=True)
        if stop_target or transitions >= a.max_transitions:
            reached, seconds_to_stop = stop_target, now()
            break
    # The saved-policy evaluation: save, load into a fresh model, evaluate on 100 fresh episodes.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "policy.pt")
        torch.save(ac.state_dict(), path)
        fresh = ActorCritic()
        fresh.load_state_dict(torch.load(path))
    final, _ = evaluate(fresh, 4, a.final_eval_episodes_per_env, 10 ** 6 * a.seed + 104729)
    print(json.dumps({"kind": "summary", "impl": "pytorch-gymnasium", "seed": a.seed,
                      "transitions_at_stop": transitions, "seconds_to_stop": seconds_to_stop,
                      "reached_target": reached, "stop_reason": "target" if reached else "max_transitions",
                      "saved_policy_eval": final, "threads": torch.get_num_threads(),
                      "version": torch.__version__, "gymnasium": gym.__version__}), flush=True)


if __name__ == "__main__":
    main()
