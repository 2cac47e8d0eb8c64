// The optimizer ops of domain ai.onnx.preview.training (ONNX's operator specification): Adagrad,
// Momentum (standard and Nesterov), Adam. Inputs: R (learning rate), T (update count), then the
// tensors X..., their gradients G..., and the optimizer's state; outputs: the new X... and state.
#include <cmath>

#include "common.h"
#include "ember/autograd.h"

namespace ember::onnx::ops {
namespace {

// The n tensor groups after R and T (the node lists groups * n of them).
std::vector<std::vector<Tensor>> groups(OpContext& c, size_t count) {
  const size_t total = c.num_inputs() - 2;
  if (total % count)
    throw ValueError("inputs do not split into " + std::to_string(count) + " equal groups");
  const size_t n = total / count;
  std::vector<std::vector<Tensor>> g(count);
  for (size_t k = 0; k < count; k++)
    for (size_t i = 0; i < n; i++) g[k].push_back(c.in(2 + k * n + i));
  return g;
}

}  // namespace

std::vector<Tensor> adagrad(OpContext& c) {
  const double decay = c.attr_float("decay_factor", 0.0), eps = c.attr_float("epsilon", 1e-6),
               norm = c.attr_float("norm_coefficient", 0.0);
  const double r = c.floats_of(0).at(0) / (1 + static_cast<double>(c.ints_of(1).at(0)) * decay);
  auto g = groups(c, 3);
  std::vector<Tensor> xs, hs;
  for (size_t i = 0; i < g[0].size(); i++) {
    Tensor reg = g[0][i] * norm + g[1][i];
    Tensor h = g[2][i] + reg.square();
    xs.push_back(g[0][i] - reg * r / (h.sqrt() + eps));
    hs.push_back(h);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Tensor> momentum(OpContext& c) {
  const double alpha = c.attr_float("alpha"), beta = c.attr_float("beta"),
               norm = c.attr_float("norm_coefficient");
  const std::string mode = c.attr_string("mode");
  if (mode != "standard" && mode != "nesterov")
    throw ValueError("mode must be standard or nesterov, got '" + mode + "'");
  const double r = c.floats_of(0).at(0), b = c.ints_of(1).at(0) > 0 ? beta : 1.0;
  auto g = groups(c, 3);
  std::vector<Tensor> xs, vs;
  for (size_t i = 0; i < g[0].size(); i++) {
    Tensor reg = g[0][i] * norm + g[1][i];
    Tensor v = g[2][i] * alpha + reg * b;
    xs.push_back(mode == "standard" ? g[0][i] - v * r : g[0][i] - (reg + v * alpha) * r);
    vs.push_back(v);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

std::vector<Tensor> adam(OpContext& c) {
  const double alpha = c.attr_float("alpha", 0.9), beta = c.attr_float("beta", 0.999),
               eps = c.attr_float("epsilon", 1e-6), norm = c.attr_float("norm_coefficient", 0.0),
               post = c.attr_float("norm_coefficient_post", 0.0);
  const double r = c.floats_of(0).at(0);
  const double t = static_cast<double>(c.ints_of(1).at(0));
  const double ra = t > 0 ? r * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : r;
  auto g = groups(c, 4);
  std::vector<Tensor> xs, vs, hs;
  for (size_t i = 0; i < g[0].size(); i++) {
    Tensor reg = g[0][i] * norm + g[1][i];
    Tensor v = g[2][i] * alpha + reg * (1 - alpha);
    Tensor h = g[3][i] * beta + reg.square() * (1 - beta);
    xs.push_back((g[0][i] - v / (h.sqrt() + eps) * ra) * (1 - post));
    vs.push_back(v);
    hs.push_back(h);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

namespace {

std::vector<std::string> strings_attr(OpContext& c, const char* name) {
  std::vector<std::string> r;
  for (const auto& a : c.node.attribute())
    if (a.name() == name)
      for (const auto& v : a.strings()) r.push_back(v);
  c.ignore_attr({name});
  return r;
}

}  // namespace

// Gradient: d y / d x for each named x, y recomputed from leaves that stand for the xs (and zs,
// held constant) by the nodes before this one.
std::vector<Tensor> gradient(OpContext& c) {
  const auto xs = strings_attr(c, "xs"), zs = strings_attr(c, "zs");
  const std::string y = c.attr_string("y");
  if (c.num_inputs() != xs.size() + zs.size())
    throw ValueError("Gradient takes the values of xs and zs as inputs");
  std::unordered_map<std::string, Tensor> leaves;
  std::vector<Tensor> wrt;
  for (size_t i = 0; i < xs.size(); i++) {
    Tensor leaf = c.in(i).detach();
    leaf.requires_grad_(true);
    leaves[xs[i]] = leaf;
    wrt.push_back(leaf);
  }
  for (size_t i = 0; i < zs.size(); i++) leaves[zs[i]] = c.in(xs.size() + i);
  Tensor out = c.recompute(y, leaves);
  std::vector<Tensor> g = autograd::grad({out}, wrt, {ones_like(out)}, true);
  for (size_t i = 0; i < g.size(); i++)
    if (!g[i].defined()) g[i] = zeros_like(wrt[i]);  // y does not depend on this x
  return g;
}

}  // namespace ember::onnx::ops
