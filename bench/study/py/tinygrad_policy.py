"""tinygrad transcription of ember's PPO networks and optimizer step (the same networks, loss,
per-network grad-norm clipping and Adam as torch_policy.py), jitted with TinyJit as a tinygrad
user would. Orthogonal init is computed with NumPy (tinygrad has no orthogonal initialiser): a QR
decomposition of a Gaussian matrix with the signs of R's diagonal, as torch.nn.init.orthogonal_.
"""
import math

import numpy as np
from tinygrad import Context, Tensor, TinyJit, nn

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def orthogonal(rows, cols, gain, rng):
    flat = rng.standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return (gain * q).astype(np.float32)


class Mlp:
    def __init__(self, inputs, hidden, layers, outputs, out_gain, rng):
        sizes = [inputs] + [hidden] * layers + [outputs]
        self.layers = []
        for i in range(len(sizes) - 1):
            lin = nn.Linear(sizes[i], sizes[i + 1])
            gain = out_gain if i == len(sizes) - 2 else math.sqrt(2.0)
            lin.weight = Tensor(orthogonal(sizes[i + 1], sizes[i], gain, rng))
            lin.bias = Tensor.zeros(sizes[i + 1])
            self.layers.append(lin)

    def __call__(self, x):
        for lin in self.layers[:-1]:
            x = lin(x).tanh()
        return self.layers[-1](x)

    def parameters(self):
        return [t for lin in self.layers for t in (lin.weight, lin.bias)]


class ActorCritic:
    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.actor = Mlp(8, 128, 4, 2, 0.01, rng)
        self.critic = Mlp(8, 128, 4, 1, 1.0, rng)
        self.log_std = Tensor.full((2,), -1.0)


def clip_grad_norm(params, max_norm):
    norm = sum((p.grad.float().square().sum() for p in params), Tensor(0.0)).sqrt()
    scale = (max_norm / (norm + 1e-6)).minimum(1.0)
    for p in params:
        p.grad = p.grad * scale


class PpoStep:
    def __init__(self, ac, lr=1e-3, eps=1e-5, clip=0.2, value_coef=0.5, max_grad_norm=0.5):
        self.ac = ac
        self.actor_params = ac.actor.parameters() + [ac.log_std]
        self.critic_params = ac.critic.parameters()
        self.opt = nn.optim.Adam(self.actor_params + self.critic_params, lr=lr, eps=eps)
        self.clip, self.value_coef, self.max_grad_norm = clip, value_coef, max_grad_norm
        self.jitted = TinyJit(self._step)

    def _step(self, obs, act, old_logp, adv_raw, ret):
        ac, clip = self.ac, self.clip
        with Context(TRAINING=1):  # tinygrad's optimizers refuse to step outside training mode
            self.opt.zero_grad()
            mean = ac.actor(obs)
            value = ac.critic(obs).reshape(-1)
            z = (act - mean) / ac.log_std.exp()
            logp = (-0.5 * z.square() - ac.log_std - HALF_LOG_2PI).sum(1)
            # ember's rule (include/ember/rl/ppo_loss.h): a spread within rounding of equal
            # advantages counts as none.
            spread = adv_raw.std()
            adv = (spread <= adv_raw.abs().max() * 1e-4).where(
                0.0, (adv_raw - adv_raw.mean()) / (spread + 1e-8))
            ratio = (logp - old_logp).exp()
            policy_loss = -(ratio * adv).minimum(ratio.clip(1 - clip, 1 + clip) * adv).mean()
            value_loss = 0.5 * (value - ret).square().mean()
            loss = policy_loss + self.value_coef * value_loss
            loss.backward()
            clip_grad_norm(self.actor_params, self.max_grad_norm)
            clip_grad_norm(self.critic_params, self.max_grad_norm)
            self.opt.step()
        return loss.realize()

    def __call__(self, obs, act, old_logp, adv_raw, ret):
        return self.jitted(obs, act, old_logp, adv_raw, ret).item()
