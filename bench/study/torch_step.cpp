// The study's controlled optimizer step in libtorch, written to match `ember train`'s step
// (rl::PpoLearner, include/ember/rl/ppo_update.h and ppo_loss.h): actor and critic MLPs 8 -> four
// tanh layers of 128 -> 2 / 1, orthogonal init, log-std -1; PPO clipped surrogate (eq. 7), value
// loss 0.5 * MSE, Gaussian entropy, approx-KL and clip fraction; grad norms clipped to 0.5
// separately for the actor (with log_std) and the critic; Adam (lr 1e-3, eps 1e-5). Same protocol
// and JSON line as ember_step.cpp. A benchmark, not a test.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "step_args.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

torch::nn::Sequential mlp(int64_t out, double out_gain) {
  torch::nn::Sequential s;
  int64_t in = 8;
  for (int i = 0; i < 4; i++) {
    torch::nn::Linear l(in, 128);
    torch::nn::init::orthogonal_(l->weight, std::sqrt(2.0));
    torch::nn::init::zeros_(l->bias);
    s->push_back(l);
    s->push_back(torch::nn::Tanh());
    in = 128;
  }
  torch::nn::Linear l(in, out);
  torch::nn::init::orthogonal_(l->weight, out_gain);
  torch::nn::init::zeros_(l->bias);
  s->push_back(l);
  return s;
}

std::vector<torch::Tensor> params(torch::nn::Sequential& s) { return s->parameters(); }

}  // namespace

int main(int argc, char** argv) {
  const ember::study::StepArgs args = ember::study::parse_step_args(argc, argv);
  if (args.threads > 0) {
    torch::set_num_threads(args.threads);
  }
  torch::manual_seed(0);
  auto actor = mlp(2, 0.01), critic = mlp(1, 1.0);
  torch::Tensor log_std = torch::full({2}, -1.0, torch::requires_grad());
  std::vector<torch::Tensor> actor_p = params(actor), critic_p = params(critic);
  actor_p.push_back(log_std);
  std::vector<torch::Tensor> all = actor_p;
  all.insert(all.end(), critic_p.begin(), critic_p.end());
  torch::optim::Adam opt(all, torch::optim::AdamOptions(1e-3).eps(1e-5));
  const int64_t B = args.batch;
  const torch::Tensor obs = torch::randn({B, 8}), act = torch::randn({B, 2}) * 0.37,
                      old_logp = torch::randn({B}) * 0.1 - 1.0, adv_raw = torch::randn({B}),
                      ret = torch::randn({B}) * 10.0;
  const double half_log_2pi = 0.5 * std::log(2 * M_PI), clip = 0.2;

  auto one = [&] {
    opt.zero_grad();
    torch::Tensor mean = actor->forward(obs);
    torch::Tensor value = critic->forward(obs).reshape({-1});
    torch::Tensor z = (act - mean) / log_std.exp();
    torch::Tensor logp = (-0.5 * z.square() - log_std - half_log_2pi).sum(1);
    torch::Tensor adv = (adv_raw - adv_raw.mean()) / (adv_raw.std() + 1e-8);
    torch::Tensor ratio = (logp - old_logp).exp();
    torch::Tensor policy_loss =
        -torch::min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean();
    torch::Tensor value_loss = 0.5 * (value - ret).square().mean();
    torch::Tensor entropy = (0.5 + half_log_2pi + log_std).sum();
    torch::Tensor loss = policy_loss + 0.5 * value_loss;
    torch::Tensor kl, clipfrac;
    {
      torch::NoGradGuard g;
      kl = ((ratio - 1) - ratio.log()).mean();
      clipfrac = ((ratio - 1).abs() > clip).to(torch::kFloat).mean();
    }
    loss.backward();
    const double an = torch::nn::utils::clip_grad_norm_(actor_p, 0.5);
    const double cn = torch::nn::utils::clip_grad_norm_(critic_p, 0.5);
    opt.step();
    for (auto* t : {&loss, &policy_loss, &value_loss, &entropy, &kl, &clipfrac})
      (void)t->item<float>();
    (void)an;
    (void)cn;
  };
  std::vector<double> ms;
  double first_ms = 0;
  for (int i = 0; i < args.untimed + args.warmup + args.timed; i++) {
    const double t0 = now();
    one();
    const double dt = (now() - t0) * 1e3;
    if (i == 0) first_ms = dt;
    if (i >= args.untimed + args.warmup) ms.push_back(dt);
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0
                        : sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  nlohmann::json r = {{"kind", "step"},
                      {"impl", "libtorch"},
                      {"version", TORCH_VERSION},
                      {"threads", torch::get_num_threads()},
                      {"batch", B},
                      {"untimed", args.untimed},
                      {"warmup", args.warmup},
                      {"timed", args.timed},
                      {"steps_ms", ms},
                      {"median_ms", median},
                      {"first_step_ms", first_ms}};
  std::printf("%s\n", r.dump().c_str());
  return 0;
}
