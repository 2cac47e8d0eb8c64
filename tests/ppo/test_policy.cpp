// The actor-critic (src/ppo/gaussian_policy.cpp, mlp.cpp): initialisation, the MLP's explicit
// backward against autograd, the PPO training step with both gradient paths, and checkpoints: the
// saved policy reproduces the live policy's actions, and jitted inference follows optimizer steps
// and in-place loads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "ember/autograd.h"
#include "ember/context.h"
#include "ember/grad_mode.h"
#include "ember/rl/actor_inference.h"
#include "ember/rl/gaussian.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/ppo_update.h"

namespace {

using namespace ember;
using namespace ember::rl;
namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() /
               ("ember_rl_test_" + name + "_" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(d);
  return d;
}

// W W^T (or W^T W) = gain^2 I for the smaller side.
void expect_orthogonal(const Tensor& w, double gain) {
  const int64_t r = w.size(0), c = w.size(1);
  const Tensor g = r <= c ? w.matmul(w.t()) : w.t().matmul(w);
  const auto v = g.to_vector<float>();
  const int64_t n = std::min(r, c);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_NEAR(v[i * n + j], i == j ? gain * gain : 0.0, 1e-4 * std::max(1.0, gain * gain))
          << i << "," << j;
}

TEST(ActorCritic, StructureAndInitialisation) {
  manual_seed(3);
  ActorCritic p{PolicyOptions{}};
  const auto named = p->named_parameters();
  ASSERT_EQ(named.size(), 1u + 10u + 10u);
  EXPECT_EQ(named[0].first, "log_std");
  EXPECT_EQ(named[1].first, "actor.0.weight");
  EXPECT_EQ(named[10].first, "actor.4.bias");
  EXPECT_EQ(named[20].first, "critic.4.bias");
  EXPECT_EQ(p->actor->linears()[0]->weight.sizes(), (Shape{128, 8}));
  EXPECT_EQ(p->actor->linears()[4]->weight.sizes(), (Shape{2, 128}));
  EXPECT_EQ(p->critic->linears()[4]->weight.sizes(), (Shape{1, 128}));
  for (float v : p->log_std.to_vector<float>()) EXPECT_FLOAT_EQ(v, -1.0f);
  for (const auto& l : p->actor->linears())
    for (float b : l->bias.to_vector<float>()) EXPECT_EQ(b, 0.0f);
  expect_orthogonal(p->actor->linears()[0]->weight, std::sqrt(2.0));
  expect_orthogonal(p->actor->linears()[2]->weight, std::sqrt(2.0));
  expect_orthogonal(p->actor->linears()[4]->weight, 0.01);
  expect_orthogonal(p->critic->linears()[4]->weight, 1.0);
  EXPECT_EQ(p->actor_parameters().size(), 11u);
  EXPECT_EQ(p->critic_parameters().size(), 10u);
  EXPECT_EQ(p->means(zeros({3, 8})).sizes(), (Shape{3, 2}));
  EXPECT_EQ(p->values(zeros({3, 8})).sizes(), (Shape{3}));
}

// The chain rule written out layer by layer, as an independent reference for autograd through the
// Mlp: dW = dy^T x, db = sum_rows dy, and dL/dy_prev = (dy W) * (1 - x^2) below each tanh.
std::vector<Tensor> reference_mlp_grads(const Mlp& mlp, const Tensor& x, const Tensor& grad_out) {
  NoGradGuard no_grad;
  const auto& linears = mlp->linears();
  std::vector<Tensor> inputs;  // each linear layer's input
  Tensor h = x;
  for (size_t i = 0; i < linears.size(); ++i) {
    inputs.push_back(h);
    h = linears[i]->forward(h);
    if (i + 1 < linears.size()) h = h.tanh();
  }
  std::vector<Tensor> grads(2 * linears.size());
  Tensor dy = grad_out;
  for (size_t k = linears.size(); k-- > 0;) {
    grads[2 * k] = dy.t().matmul(inputs[k]);
    grads[2 * k + 1] = dy.sum({0});
    if (k == 0) break;
    dy = dy.matmul(linears[k]->weight) * (1.0 - inputs[k].square());
  }
  return grads;
}

TEST(Mlp, AutogradMatchesTheChainRule) {
  manual_seed(11);
  Mlp mlp(MlpOptions{8, 3, 16, 3, std::sqrt(2.0), 1.0});
  const Tensor x = randn({10, 8}).realize();
  const Tensor go = randn({10, 3}).realize();
  const auto params = mlp->parameters();
  const auto got = autograd::grad({(mlp->forward(x) * go).sum()}, params);
  const auto ref = reference_mlp_grads(mlp, x, go);
  ASSERT_EQ(got.size(), params.size());
  ASSERT_EQ(ref.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_EQ(got[i].sizes(), params[i].sizes()) << i;
    const auto a = got[i].to_vector<float>(), b = ref[i].to_vector<float>();
    for (size_t k = 0; k < a.size(); ++k)
      ASSERT_NEAR(a[k], b[k], 1e-4 + 1e-3 * std::fabs(b[k])) << i;
  }
}

std::vector<Tensor> random_minibatch(int64_t m) {
  return {randn({m, 8}).realize(), randn({m, 2}).realize(), (randn({m}) - 2.0).realize(),
          randn({m}).realize(), (randn({m}) * 3.0).realize()};
}

// A training step leaves no lazy value alive that reads the weights its optimizer step
// overwrites, so the step makes no copies of them (ember::RuntimeStats::buffers_preserved), eager
// and jitted.
TEST(PpoLearner, StepKeepsNoCopiesOfTheWeights) {
  for (bool jit : {false, true}) {
    manual_seed(4);
    ActorCritic p{PolicyOptions{}};
    PpoUpdateOptions o;
    o.jit = jit;
    PpoLearner learner(p, o);
    reset_runtime_stats();
    for (int s = 0; s < 4; ++s) learner.train_step(random_minibatch(32))[0].item<double>();
    EXPECT_EQ(runtime_stats().buffers_preserved, 0) << "jit " << jit;
  }
}

// Separate clipping: each group's norm is clipped to max_grad_norm on its own.
TEST(PpoLearner, ReportsUnclippedNormsAndClipsPerNetwork) {
  manual_seed(8);
  ActorCritic p{PolicyOptions{}};
  PpoUpdateOptions o;
  o.jit = false;
  o.lr = 0.0;  // Adam with lr 0: parameters stay; we only look at the gradients' norms
  PpoLearner learner(p, o);
  manual_seed(9);
  const auto m = learner.train_step(random_minibatch(32));
  const double an = m[6].item<double>(), cn = m[7].item<double>();
  EXPECT_GT(cn, 0.5);  // returns of std 3: the critic's raw gradient is large
  auto norm = [](const std::vector<Tensor>& ps) {
    double s = 0;
    for (const Tensor& t : ps)
      for (float g : t.grad().to_vector<float>()) s += double(g) * g;
    return std::sqrt(s);
  };
  EXPECT_NEAR(norm(p->critic_parameters()), 0.5, 1e-3);
  EXPECT_NEAR(norm(p->actor_parameters()), std::min(an, 0.5), 1e-3);
}

// The saved policy, loaded into a fresh model, computes the live policy's means bit for bit, so
// with the same noise it takes the same actions. A jitted actor captured BEFORE the optimizer steps
// and the load reads the live weights afterwards.
TEST(PolicyCheckpoint, SavedPolicyReproducesLiveActions) {
  manual_seed(13);
  ActorCritic live{PolicyOptions{}};
  const MeansFn jitted = make_means_fn(live, /*use_jit=*/true);
  manual_seed(14);
  const Tensor obs_t = randn({4, 8}).realize();
  const std::vector<float> obs = obs_t.to_vector<float>();
  std::vector<float> before(8), m(8);
  for (int i = 0; i < 3; ++i) jitted(obs, before);  // warm-up, capture, replay

  PpoUpdateOptions o;
  o.jit = false;
  o.lr = 1e-2;
  PpoLearner learner(live, o);
  manual_seed(15);
  for (int s = 0; s < 3; ++s) learner.train_step(random_minibatch(32));

  const std::vector<float> live_means = live->means(obs_t).to_vector<float>();
  jitted(obs, m);
  EXPECT_EQ(m, live_means) << "jitted actor read stale weights after optimizer steps";
  EXPECT_NE(m, before);

  const fs::path dir = temp_dir("ckpt");
  const std::string path = (dir / "policy.safetensors").string();
  save_policy(live, path, {{"note", "test"}});
  Metadata meta;
  const ActorCritic fresh = load_policy(path, &meta);
  EXPECT_EQ(meta.at("note"), "test");
  EXPECT_EQ(fresh->means(obs_t).to_vector<float>(), live_means);
  EXPECT_EQ(fresh->values(obs_t).to_vector<float>(), live->values(obs_t).to_vector<float>());
  EXPECT_EQ(fresh->log_std_values(), live->log_std_values());
  std::vector<float> fm(8);
  make_means_fn(fresh, true)(obs, fm);
  EXPECT_EQ(fm, live_means);
  GaussianSampler s1(99), s2(99);
  std::vector<float> a1(8), a2(8);
  s1.sample(live_means, live->log_std_values(), a1);
  s2.sample(fm, fresh->log_std_values(), a2);
  EXPECT_EQ(a1, a2);

  // In-place load into a model whose jitted actor is already captured.
  manual_seed(77);
  ActorCritic other{PolicyOptions{}};
  const MeansFn other_jit = make_means_fn(other, true);
  for (int i = 0; i < 3; ++i) other_jit(obs, m);
  EXPECT_NE(m, live_means);
  ember::load(*other, path);
  other_jit(obs, m);
  EXPECT_EQ(m, live_means) << "jitted actor read stale weights after a checkpoint load";
  fs::remove_all(dir);
}

TEST(PolicyCheckpoint, RejectsFilesWithoutPolicyMetadata) {
  const fs::path dir = temp_dir("nometa");
  const std::string path = (dir / "plain.safetensors").string();
  ember::save(nn::NamedTensors{{"x", zeros({2})}}, path);
  EXPECT_THROW(load_policy(path), IOError);
  EXPECT_THROW(load_policy((dir / "missing.safetensors").string()), IOError);
  fs::remove_all(dir);
}

TEST(PolicyOptions, JsonRoundTrip) {
  PolicyOptions o;
  o.hidden = 64;
  o.log_std_init = -0.5;
  const PolicyOptions r = policy_options_from_json(policy_options_to_json(o));
  EXPECT_EQ(r.hidden, 64);
  EXPECT_EQ(r.log_std_init, -0.5);
  EXPECT_THROW(policy_options_from_json("{not json"), ValueError);
}

}  // namespace
