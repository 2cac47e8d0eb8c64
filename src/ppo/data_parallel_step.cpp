// PpoLearner's data-parallel step (ppo_update.h, "Data-parallel"): the gradient function, one
// dist::all_reduce of its flat buffer, the apply function.
#include <string>

#include "ember/autograd.h"
#include "ember/dist.h"
#include "ember/rl/advantage_moments.h"
#include "ember/rl/ppo_update.h"
#include "ember/support/clock.h"

namespace ember::rl {
namespace {

constexpr int64_t kMetrics = 6;  // loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction

}  // namespace

std::vector<Tensor> PpoLearner::gradient_step(const std::vector<Tensor>& in) {
  check_inputs(in);
  PpoLossOptions lo = options_.loss;
  lo.normalize_advantages = false;  // data_parallel_step normalised them over every rank's rows
  const Tensor means = policy_->means(in[0]), values = policy_->values(in[0]);
  const PpoLossTerms t = ppo_loss(means, policy_->log_std, values, in[1], in[2], in[3], in[4], lo);
  const std::vector<Tensor> grads = autograd::grad({t.loss}, params_);
  std::vector<Tensor> parts;
  for (const Tensor& g : grads) parts.push_back(g.reshape({-1}));
  for (const Tensor& m :
       {t.loss, t.policy_loss, t.value_loss, t.entropy, t.approx_kl, t.clip_fraction})
    parts.push_back(m.detach().reshape({1}));
  Tensor flat = cat(parts);
  flat.realize();
  return {flat};
}

std::vector<Tensor> PpoLearner::apply_step(const std::vector<Tensor>& in) {
  if (in.size() != 1 || in[0].dim() != 1 || in[0].size(0) != param_elements_ + kMetrics)
    throw ShapeError("PpoLearner::apply_step: expected one flat buffer [" +
                     std::to_string(param_elements_ + kMetrics) + "]");
  optimizer_->zero_grad();
  int64_t at = 0;
  for (const Tensor& p : params_) {
    // A copy, not a view of the input: clip_grad_norm_ scales the gradients in place.
    Tensor(p).set_grad(in[0].narrow(0, at, p.numel()).reshape(p.shape()).clone());
    at += p.numel();
  }
  return clip_and_step();
}

std::vector<Tensor> PpoLearner::data_parallel_step(const std::vector<Tensor>& in) {
  check_inputs(in);
  std::vector<Tensor> args = in;
  if (options_.loss.normalize_advantages) {
    const double t0 = support::now_seconds();
    args[3] = from_vector(normalize_advantages_globally(in[3].to_vector<float>()));
    advantage_moments_seconds_ += support::now_seconds() - t0;
  }
  const Tensor flat = gradient_fn_(args).at(0);
  const double t1 = support::now_seconds();
  dist::all_reduce(flat, dist::ReduceOp::Mean);
  allreduce_seconds_ += support::now_seconds() - t1;
  const std::vector<Tensor> norms = apply_fn_({flat});
  // The ranks' mean metrics, from the reduced buffer: copied into buffers (from_blob), not lazy
  // constants (scalar_tensor), whose realize would compile a kernel for every new value.
  const float* metrics = static_cast<const float*>(flat.data_ptr()) + param_elements_;
  std::vector<Tensor> out;
  for (int64_t k = 0; k < kMetrics; ++k) out.push_back(from_blob(metrics + k, {}, kFloat32));
  out.insert(out.end(), norms.begin(), norms.end());
  return out;
}

}  // namespace ember::rl
