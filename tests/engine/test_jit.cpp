// ember::jit: replays must match eager execution (the study's stale-weights regression), check
// their inputs, return fresh outputs and draw fresh random numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"

namespace {

using namespace ember;

nn::Sequential make_actor() {
  nn::Sequential s;
  s->push_back(nn::Linear(8, 128));
  s->push_back(nn::Tanh());
  s->push_back(nn::Linear(128, 128));
  s->push_back(nn::Tanh());
  s->push_back(nn::Linear(128, 2));
  return s;
}

Tensor obs(int64_t seed) {
  std::vector<float> v(4 * 8);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(std::sin(0.37 * i + seed));
  return from_vector(v, IntList{4, 8});
}

void train_steps(nn::Sequential& net, optim::Optimizer& opt, int n) {
  for (int i = 0; i < n; i++) {
    opt.zero_grad();
    net->forward(obs(100 + i)).square().mean().backward();
    opt.step();
  }
}

void expect_bit_equal(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<float>(), y = b.to_vector<float>();
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); i++) ASSERT_EQ(x[i], y[i]) << "element " << i;
}

TEST(Jit, ActorMatchesEagerAfterOptimizerStepsAndLoads) {
  manual_seed(1);
  auto net = make_actor();
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  auto f =
      jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{net->forward(in[0])}; });
  for (int i = 0; i < 3; i++) expect_bit_equal(f({obs(i)})[0], net->forward(obs(i)));
  EXPECT_EQ(f.replays(), 1);
  int done = 0;
  for (int target : {1, 5, 40}) {
    train_steps(net, opt, target - done);
    done = target;
    expect_bit_equal(f({obs(7)})[0], net->forward(obs(7)));
  }
  // A checkpoint-style load: new values written into the live parameters in place.
  {
    NoGradGuard g;
    for (auto& p : net->parameters()) {
      p.copy_(p * 0.5 + 0.01);
      p.realize();
    }
  }
  expect_bit_equal(f({obs(9)})[0], net->forward(obs(9)));
  EXPECT_GE(f.replays(), 5);
}

TEST(Jit, TrainingStepMatchesEager) {
  auto run = [](bool use_jit) {
    manual_seed(3);
    auto net = make_actor();
    optim::Adam opt(net->parameters(), optim::AdamOptions(1e-3));
    auto step = [&](const std::vector<Tensor>& in) {
      opt.zero_grad();
      Tensor loss = nn::functional::mse_loss(net->forward(in[0]), in[1]);
      loss.backward();
      Tensor norm = nn::utils::clip_grad_norm_(net->parameters(), 0.5);
      opt.step();
      return std::vector<Tensor>{loss.detach(), norm};
    };
    Jit j(step);
    std::vector<float> losses;
    for (int i = 0; i < 20; i++) {
      auto target = obs(50 + i).narrow(1, 0, 2) * 0.3;
      auto out = use_jit ? j({obs(i), target}) : step({obs(i), target});
      losses.push_back(out[0].item<float>());
    }
    std::vector<float> params;
    for (auto& p : net->parameters())
      for (float v : p.to_vector<float>()) params.push_back(v);
    return std::make_pair(losses, params);
  };
  auto eager = run(false), jitted = run(true);
  ASSERT_EQ(eager.first.size(), jitted.first.size());
  for (size_t i = 0; i < eager.first.size(); i++)
    EXPECT_NEAR(eager.first[i], jitted.first[i], 1e-6) << i;
  ASSERT_EQ(eager.second.size(), jitted.second.size());
  for (size_t i = 0; i < eager.second.size(); i++)
    ASSERT_NEAR(eager.second[i], jitted.second[i], 1e-6) << i;
}

TEST(Jit, ChecksInputSignature) {
  auto f = jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2}; });
  f({ones({2, 3})});
  f({ones({2, 3})});
  try {
    f({ones({3, 3})});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("input 0"), std::string::npos) << m;
    EXPECT_NE(m.find("[3, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
  }
  EXPECT_THROW(f({ones({2, 3}, kFloat64)}), DTypeError);
  EXPECT_THROW(f({ones({2, 3}), ones({2, 3})}), ValueError);
}

TEST(Jit, ReadingDataDuringCaptureRaises) {
  auto f = jit([](const std::vector<Tensor>& in) {
    float v = in[0].sum().item<float>();
    return std::vector<Tensor>{in[0] * v};
  });
  f({ones({2})});
  EXPECT_THROW(f({ones({2})}), Error);
}

TEST(Jit, OutputsAreFreshEachCall) {
  auto f = jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  auto a = f({full({3}, 1.0)})[0];
  auto b = f({full({3}, 2.0)})[0];
  auto c = f({full({3}, 3.0)})[0];
  auto d = f({full({3}, 4.0)})[0];
  EXPECT_EQ(c.to_vector<float>(), std::vector<float>({4, 4, 4}));
  EXPECT_EQ(d.to_vector<float>(), std::vector<float>({5, 5, 5}));
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>({3, 3, 3}));
  EXPECT_NE(c.storage_id(), d.storage_id());
}

TEST(Jit, RandomOpsDrawNewNumbersOnReplay) {
  auto f =
      jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + rand({4})}; });
  auto z = zeros({4});
  std::vector<std::vector<float>> seen;
  for (int i = 0; i < 4; i++) seen.push_back(f({z})[0].to_vector<float>());
  for (size_t i = 0; i < seen.size(); i++)
    for (size_t j = i + 1; j < seen.size(); j++) EXPECT_NE(seen[i], seen[j]) << i << " vs " << j;
  // The same seed replays the same sequence.
  manual_seed(11);
  auto g =
      jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + rand({4})}; });
  std::vector<std::vector<float>> first;
  for (int i = 0; i < 3; i++) first.push_back(g({z})[0].to_vector<float>());
  manual_seed(11);
  for (int i = 0; i < 3; i++) EXPECT_EQ((zeros({4}) + rand({4})).to_vector<float>(), first[i]);
}

TEST(Jit, ReplacedParameterIsDetectedAndResetRecaptures) {
  Tensor w = full({2, 3}, 0.5).clone();
  w.set_requires_grad(true);
  auto f =
      jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].matmul(w.t())}; });
  f({ones({1, 3})});
  f({ones({1, 3})});
  f({ones({1, 3})});
  w = full({2, 3}, 0.25).clone();  // the captured weight buffer is released by its only owner
  w.realize();
  EXPECT_THROW(f({ones({1, 3})}), Error);
  f.reset();
  f({ones({1, 3})});
  auto out = f({ones({1, 3})})[0];
  expect_bit_equal(out, ones({1, 3}).matmul(w.t()));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>({0.75f, 0.75f}));
}

TEST(Jit, ReplayLaunchesNoNewCompilation) {
  auto net = make_actor();
  auto f =
      jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{net->forward(in[0])}; });
  f({obs(0)});
  f({obs(1)});
  auto before = runtime_stats();
  for (int i = 0; i < 10; i++) f({obs(i)});
  EXPECT_EQ(runtime_stats().kernels_compiled, before.kernels_compiled);
  EXPECT_EQ(runtime_stats().realizes, before.realizes);  // no scheduling on replay
  EXPECT_GT(f.captured_launches(), 0);
}

}  // namespace
