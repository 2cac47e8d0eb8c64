"""PyTorch transcription of ember's PPO networks and optimizer step, as a Python user writes it.

Shared by torch_step.py (the controlled step) and torch_ppo_gym.py (the trainer on Gymnasium).
It follows `ember train` (include/ember/rl/gaussian_policy.h, ppo_loss.h, ppo_update.h) and the C++
reference bench/study/torch_policy.h: actor and critic MLPs 8 -> four tanh layers of 128 -> 2 / 1,
orthogonal init (gain sqrt(2) hidden, 0.01 actor output, 1.0 critic output), zero biases,
state-independent log-std initialised to -1; the clipped surrogate objective (Schulman et al. 2017,
eq. 7, clip 0.2) on normalised advantages, value loss 0.5 * MSE, grad norms clipped to 0.5
separately for the actor (with log_std) and the critic, Adam (lr 1e-3, eps 1e-5).
"""
import math

import torch
from torch import nn

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def mlp(inputs, hidden, layers, outputs, out_gain):
    mods = []
    for i in range(layers):
        lin = nn.Linear(inputs if i == 0 else hidden, hidden)
        nn.init.orthogonal_(lin.weight, math.sqrt(2.0))
        nn.init.zeros_(lin.bias)
        mods += [lin, nn.Tanh()]
    out = nn.Linear(hidden if layers else inputs, outputs)
    nn.init.orthogonal_(out.weight, out_gain)
    nn.init.zeros_(out.bias)
    mods.append(out)
    return nn.Sequential(*mods)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=8, act_dim=2, hidden=128, layers=4):
        super().__init__()
        self.actor = mlp(obs_dim, hidden, layers, act_dim, 0.01)
        self.critic = mlp(obs_dim, hidden, layers, 1, 1.0)
        self.log_std = nn.Parameter(torch.full((act_dim,), -1.0))

    def actor_parameters(self):
        return list(self.actor.parameters()) + [self.log_std]


class PpoStep:
    """One optimizer step on a minibatch; returns the step's metrics as Python floats."""

    def __init__(self, ac, lr=1e-3, eps=1e-5, clip=0.2, value_coef=0.5, max_grad_norm=0.5):
        self.ac, self.clip, self.value_coef, self.max_grad_norm = ac, clip, value_coef, max_grad_norm
        self.actor_params = ac.actor_parameters()
        self.critic_params = list(ac.critic.parameters())
        self.opt = torch.optim.Adam(self.actor_params + self.critic_params, lr=lr, eps=eps)

    def __call__(self, obs, act, old_logp, adv_raw, ret):
        ac, clip = self.ac, self.clip
        self.opt.zero_grad()
        mean = ac.actor(obs)
        value = ac.critic(obs).reshape(-1)
        z = (act - mean) / ac.log_std.exp()
        logp = (-0.5 * z.square() - ac.log_std - HALF_LOG_2PI).sum(1)
        # ember's rule (include/ember/rl/ppo_loss.h): a spread within rounding of equal
        # advantages counts as none.
        spread = adv_raw.std()
        adv = torch.where(spread <= adv_raw.abs().max() * 1e-4, torch.zeros_like(adv_raw),
                          (adv_raw - adv_raw.mean()) / (spread + 1e-8))
        ratio = (logp - old_logp).exp()
        policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
        value_loss = 0.5 * (value - ret).square().mean()
        entropy = (0.5 + HALF_LOG_2PI + ac.log_std).sum()
        loss = policy_loss + self.value_coef * value_loss
        with torch.no_grad():
            kl = ((ratio - 1) - ratio.log()).mean()
            clipfrac = ((ratio - 1).abs() > clip).float().mean()
        loss.backward()
        nn.utils.clip_grad_norm_(self.actor_params, self.max_grad_norm)
        nn.utils.clip_grad_norm_(self.critic_params, self.max_grad_norm)
        self.opt.step()
        return {"loss": loss.item(), "policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                "entropy": entropy.item(), "approx_kl": kl.item(), "clip_fraction": clipfrac.item()}
