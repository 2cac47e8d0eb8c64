// The module parity cases' shared steps (tests/parity/module_state.h).
#include "module_state.h"

#include <gtest/gtest.h>

#include <vector>

namespace parity {

namespace {

std::vector<std::string> keys(const auto& map) {
  std::vector<std::string> k;
  for (auto& [n, t] : map) k.push_back(n);
  return k;
}

}  // namespace

std::map<std::string, ember::Tensor> ember_state(const ember::nn::Module& m) {
  std::map<std::string, ember::Tensor> s;
  for (auto& [n, t] : m.named_parameters()) s[n] = t;
  for (auto& [n, t] : m.named_buffers()) s[n] = t;
  return s;
}

std::map<std::string, torch::Tensor> torch_state(const torch::nn::Module& m) {
  std::map<std::string, torch::Tensor> s;
  for (auto& p : m.named_parameters())
    if (p.value().defined()) s[p.key()] = p.value();
  for (auto& p : m.named_buffers())
    if (p.value().defined()) s[p.key()] = p.value();
  return s;
}

torch::Tensor to_torch(const ember::Tensor& t) {
  TorchB tb(0, false);
  EmberB eb(0, false);
  Host h = eb.host(t);
  std::vector<double> v = h.f;
  if (v.empty())
    for (int64_t i : h.i) v.push_back(static_cast<double>(i));
  auto dt = t.dtype() == ember::kFloat64 ? tb.f64 : t.dtype() == ember::kInt64 ? tb.i64 : tb.f32;
  return tb.from_host(v, h.shape, dt);
}

void to_float64(ember::nn::Module& e, torch::nn::Module& t) {
  e.to(ember::kFloat64);
  torch::NoGradGuard no_grad;
  for (auto& [n, x] : torch_state(t))
    if (x.is_floating_point()) x.set_data(x.to(torch::kFloat64));
}

void copy_state(const ember::nn::Module& e, torch::nn::Module& t) {
  auto es = ember_state(e);
  auto ts = torch_state(t);
  ASSERT_EQ(keys(es), keys(ts)) << "state dict names differ from libtorch's";
  torch::NoGradGuard no_grad;
  for (auto& [n, et] : es) {
    ASSERT_EQ(et.shape(), ts[n].sizes().vec()) << n;
    ts[n].copy_(to_torch(et));
  }
}

void expect_same(const ember::Tensor& e, const torch::Tensor& t, const std::string& what, Tol tol) {
  ASSERT_EQ(e.defined(), t.defined()) << what;
  if (!e.defined()) return;
  EmberB eb(0, false);
  TorchB tb(0, false);
  std::string diff = compare({eb.host(e)}, {tb.host(t)}, tol);
  EXPECT_TRUE(diff.empty()) << what << ":\n" << diff;
}

}  // namespace parity
