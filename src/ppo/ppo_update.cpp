#include "ember/rl/ppo_update.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>

#include "ember/autograd.h"
#include "ember/context.h"
#include "ember/grad_mode.h"
#include "ember/rl/random.h"
#include "ember/support/clock.h"

namespace ember::rl {
namespace {

using support::now_seconds;

}  // namespace

PpoLearner::PpoLearner(ActorCritic policy, const PpoUpdateOptions& options)
    : policy_(std::move(policy)), options_(options) {
  if (options.passes < 1 || options.minibatch < 1)
    throw ValueError("PpoLearner: passes and minibatch must be >= 1");
  if (!(options.loss.clip > 0)) throw ValueError("PpoLearner: clip must be > 0");
  actor_params_ = policy_->actor_parameters();
  critic_params_ = policy_->critic_parameters();
  params_ = actor_params_;
  params_.insert(params_.end(), critic_params_.begin(), critic_params_.end());
  for (const Tensor& p : params_) param_elements_ += p.numel();
  optim::AdamOptions ao(options.lr);
  ao.eps = options.adam_eps;
  ao.betas(options.adam_beta1, options.adam_beta2);
  optimizer_ = std::make_unique<optim::Adam>(params_, ao);
  if (options.data_parallel) {
    gradient_fn_ =
        maybe_jit([this](const std::vector<Tensor>& in) { return gradient_step(in); }, options.jit);
    apply_fn_ =
        maybe_jit([this](const std::vector<Tensor>& in) { return apply_step(in); }, options.jit);
    step_fn_ = [this](const std::vector<Tensor>& in) { return data_parallel_step(in); };
  } else {
    step_fn_ =
        maybe_jit([this](const std::vector<Tensor>& in) { return train_step(in); }, options.jit);
  }
}

PpoLearner::~PpoLearner() {
  if (ahead_.joinable()) ahead_.join();  // work not yet run on the caller's thread is dropped
}

void PpoLearner::compile_ahead(const std::function<void(const ActorCritic&)>& before) {
  if (ahead_job_ || ahead_.joinable()) return;
  PpoUpdateOptions opts = options_;
  opts.jit = false;
  const PolicyOptions po = policy_->options();
  ahead_job_ = [this, opts, po, before] {
    try {
      const int64_t mb = opts.minibatch, o = po.obs_dim, na = po.act_dim;
      const std::vector<float> zeros(static_cast<size_t>(mb * std::max(o, na)), 0.f);
      ahead_stats_ = ember::compile_ahead([&] {
        ScopedGenerator rng(0);
        const ActorCritic scratch(po);
        if (before) before(scratch);
        PpoLearner learner(scratch, opts);
        // update()'s minibatch: the same shapes and dtypes, in buffers (from_blob).
        const std::vector<Tensor> in = {
            from_blob(zeros.data(), {mb, o}, kFloat32), from_blob(zeros.data(), {mb, na}, kFloat32),
            from_blob(zeros.data(), {mb}, kFloat32), from_blob(zeros.data(), {mb}, kFloat32),
            from_blob(zeros.data(), {mb}, kFloat32)};
        if (opts.data_parallel)  // the two functions that the collectives separate
          realize(learner.apply_step(learner.gradient_step(in)));
        else
          realize(learner.train_step(in));  // as the jit's first call does
      });
    } catch (const std::exception& e) {
      if (Context::get().debug >= 1)
        std::fprintf(stderr, "ppo: compiling the first update ahead failed: %s\n", e.what());
    } catch (...) {  // the real step meets and reports the same failure
    }
  };
  if (get_num_threads() > 1) {
    ahead_ = std::thread(std::move(ahead_job_));
    ahead_job_ = nullptr;
  }
}

double PpoLearner::wait_compile_ahead() {
  if (!ahead_job_ && !ahead_.joinable()) return 0;
  const double t0 = now_seconds();
  if (ahead_.joinable()) ahead_.join();
  if (ahead_job_) std::exchange(ahead_job_, nullptr)();
  return now_seconds() - t0;
}

void PpoLearner::check_inputs(const std::vector<Tensor>& in) const {
  if (in.size() != 5)
    throw ValueError(
        "PpoLearner::train_step: expected 5 inputs (obs, actions, old_log_probs, "
        "advantages, returns), got " +
        std::to_string(in.size()));
}

std::vector<Tensor> PpoLearner::train_step(const std::vector<Tensor>& in) {
  check_inputs(in);
  const Tensor &obs = in[0], &actions = in[1], &old_logp = in[2], &adv = in[3], &ret = in[4];
  optimizer_->zero_grad();
  const std::vector<Tensor>& ap = actor_params_;
  const std::vector<Tensor>& cp = critic_params_;
  std::vector<Tensor> out;
  {  // The lazy forward and loss die here, before the step overwrites the weights they read.
    const Tensor means = policy_->means(obs), values = policy_->values(obs);
    const PpoLossTerms terms =
        ppo_loss(means, policy_->log_std, values, actions, old_logp, adv, ret, options_.loss);
    std::vector<Tensor> all = ap;  // actor params (incl. log_std last), then critic params
    all.insert(all.end(), cp.begin(), cp.end());
    const std::vector<Tensor> grads = autograd::grad({terms.loss}, all);
    // The metrics leave without their graphs (a realized value that requires grad keeps its
    // graph for a later backward, and would make the step keep copies of the old weights).
    out = {terms.loss.detach(),    terms.policy_loss.detach(), terms.value_loss.detach(),
           terms.entropy.detach(), terms.approx_kl.detach(),   terms.clip_fraction.detach()};
    // One schedule for the metrics and every gradient (shared forward work computed once).
    std::vector<Tensor> to_realize = out;
    to_realize.insert(to_realize.end(), grads.begin(), grads.end());
    realize(to_realize);
    for (size_t i = 0; i < ap.size(); ++i) Tensor(ap[i]).set_grad(grads[i]);
    for (size_t i = 0; i < cp.size(); ++i) Tensor(cp[i]).set_grad(grads[ap.size() + i]);
  }
  const std::vector<Tensor> norms = clip_and_step();
  out.insert(out.end(), norms.begin(), norms.end());
  return out;
}

std::vector<Tensor> PpoLearner::clip_and_step() {
  const std::vector<Tensor>& ap = actor_params_;
  const std::vector<Tensor>& cp = critic_params_;
  const double max_norm = options_.max_grad_norm > 0 ? options_.max_grad_norm : 1e30;
  Tensor actor_norm, critic_norm;
  if (options_.separate_grad_clip) {
    actor_norm = nn::utils::clip_grad_norm_(ap, max_norm);
    critic_norm = nn::utils::clip_grad_norm_(cp, max_norm);
  } else {
    std::vector<Tensor> all = ap;
    all.insert(all.end(), cp.begin(), cp.end());
    actor_norm = critic_norm = nn::utils::clip_grad_norm_(all, max_norm);
  }
  // Realized with the gradients still unclipped, so the step need not keep a copy of them.
  realize({actor_norm, critic_norm});
  optimizer_->step();
  return {actor_norm, critic_norm};
}

UpdateStats PpoLearner::update(const RolloutBuffer& buffer, uint64_t shuffle_seed,
                               const std::function<void(int64_t, int64_t)>& on_step) {
  const int64_t n = buffer.size(), mb = options_.minibatch;
  if (n % mb != 0)
    throw ValueError("PpoLearner::update: minibatch " + std::to_string(mb) +
                     " does not divide the " + std::to_string(n) + " transitions of an epoch");
  UpdateStats st;
  st.compile_ahead_wait_seconds = wait_compile_ahead();
  const double allreduce0 = allreduce_seconds_, moments0 = advantage_moments_seconds_;
  Xoshiro256 rng(shuffle_seed);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  MiniBatch batch;
  const int64_t o = buffer.obs_dim(), a = buffer.act_dim();
  for (int64_t pass = 0; pass < options_.passes; ++pass) {
    double t0 = now_seconds();
    std::iota(perm.begin(), perm.end(), int64_t{0});
    for (int64_t i = n - 1; i > 0; --i)  // Fisher-Yates
      std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(rng.integers(0, i + 1))]);
    st.gather_seconds += now_seconds() - t0;
    for (int64_t start = 0; start < n; start += mb) {
      t0 = now_seconds();
      buffer.gather(std::span<const int64_t>(perm).subspan(static_cast<size_t>(start),
                                                           static_cast<size_t>(mb)),
                    batch);
      const std::vector<Tensor> in = {from_blob(batch.observations.data(), {mb, o}, kFloat32),
                                      from_blob(batch.actions.data(), {mb, a}, kFloat32),
                                      from_blob(batch.log_probs.data(), {mb}, kFloat32),
                                      from_blob(batch.advantages.data(), {mb}, kFloat32),
                                      from_blob(batch.returns.data(), {mb}, kFloat32)};
      const double t1 = now_seconds();
      st.gather_seconds += t1 - t0;
      const std::vector<Tensor> m = step_fn_(in);
      double v[8];
      for (int k = 0; k < 8; ++k) v[k] = m[static_cast<size_t>(k)].item<double>();
      st.step_seconds += now_seconds() - t1;
      st.loss += v[0];
      st.policy_loss += v[1];
      st.value_loss += v[2];
      st.entropy += v[3];
      st.approx_kl += v[4];
      st.clip_fraction += v[5];
      st.actor_grad_norm += v[6];
      st.critic_grad_norm += v[7];
      st.last_approx_kl = v[4];
      ++st.optimizer_steps;
      if (on_step) on_step(st.optimizer_steps, options_.passes * (n / mb));
    }
  }
  st.allreduce_seconds = allreduce_seconds_ - allreduce0;
  st.advantage_moments_seconds = advantage_moments_seconds_ - moments0;
  const double k = static_cast<double>(std::max<int64_t>(st.optimizer_steps, 1));
  for (double* f : {&st.loss, &st.policy_loss, &st.value_loss, &st.entropy, &st.approx_kl,
                    &st.clip_fraction, &st.actor_grad_norm, &st.critic_grad_norm})
    *f /= k;
  return st;
}

}  // namespace ember::rl
