// The materialisation pass (schedule/materialise.h) against its reference, the scheduler's former
// loop that lowered the whole schedule again after each value it materialised: the same set, the
// same kernels in the same order, with fewer lowerings. The values are checked against a host
// reference too.
#include <gtest/gtest.h>

#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "ir/node.h"
#include "kernel_probe.h"
#include "schedule/materialise.h"

namespace {

using namespace ember;
using ember::schedule::Materialised;

struct Both {
  Materialised pass, reference;
};

// The pass and the reference on the graph below `ts` (the roots), as create_schedule calls them.
Both materialise_both(const std::vector<Tensor>& ts) {
  std::vector<const ir::Node*> roots;
  for (auto& t : ts) roots.push_back(t.node().get());
  auto order = ir::toposort(roots);
  std::unordered_map<const ir::Node*, int> users;
  for (auto* n : order) {
    users.emplace(n, 0);
    std::unordered_set<const ir::Node*> distinct;
    for (auto& s : n->src) distinct.insert(s.get());
    for (auto* s : distinct) users[s]++;
  }
  // The buffers by their ids (nothing here reads an overwritten version).
  const schedule::NameBuffer name = [](const ir::Node& n) {
    return static_cast<schedule::BufferName>(ir::buffer_id(n));
  };
  return {schedule::materialise(roots, order, users, name),
          schedule::materialise(roots, order, users, name, /*whole_schedule=*/true)};
}

void expect_same(const Both& b) {
  EXPECT_EQ(b.pass.set, b.reference.set);
  ASSERT_EQ(b.pass.items.size(), b.reference.items.size());
  for (size_t i = 0; i < b.pass.items.size(); i++) {
    EXPECT_EQ(b.pass.items[i].node, b.reference.items[i].node) << i;
    EXPECT_EQ(b.pass.items[i].kernel.key(), b.reference.items[i].kernel.key()) << i;
  }
}

Tensor input(IntList shape) {
  Tensor t = randn(shape);
  t.realize();
  return t;
}

// A tanh MLP's forward and backward: each layer's tanh(x W + b) is expensive under the next
// product's broadcast, and the backward adds reduces that cannot fuse; the reference lowered the
// whole schedule again for each.
TEST(MaterialisePass, MlpStepSameSetAsReferenceWithFewerLowerings) {
  manual_seed(3);
  Tensor x = input({64, 8});
  std::vector<Tensor> ws, bs;
  for (int64_t in : {8, 16, 16}) {
    ws.push_back(input({in, 16}).requires_grad_());
    bs.push_back(input({16}).requires_grad_());
  }
  Tensor h = x;
  for (size_t l = 0; l < ws.size(); l++) h = (h.matmul(ws[l]) + bs[l]).tanh();
  Tensor loss = (h * h).mean();
  std::vector<Tensor> params;
  for (size_t l = 0; l < ws.size(); l++) {
    params.push_back(ws[l]);
    params.push_back(bs[l]);
  }
  std::vector<Tensor> roots = autograd::grad({loss}, params);  // lazy
  roots.push_back(loss);
  Both b = materialise_both(roots);
  expect_same(b);
  const int kernels = static_cast<int>(b.pass.items.size());
  const int added = static_cast<int>(b.pass.set.size()) - b.pass.initial;
  EXPECT_GE(added, 3);  // the three tanh layers at least
  // Each addition re-lowers its own kernel and the few that looked at it, not all of them.
  EXPECT_LT(b.pass.lowerings, b.reference.lowerings);
  EXPECT_LE(b.pass.lowerings, 2 * kernels);
  std::printf("%d kernels, %d added: %d lowerings (reference %d)\n", kernels, added,
              b.pass.lowerings, b.reference.lowerings);

  // The realize launches those kernels and computes the loss (host reference).
  auto xv = x.to_vector<float>();
  std::vector<float> hv = xv;
  int64_t width = 8;
  for (size_t l = 0; l < ws.size(); l++) {
    auto wv = ws[l].to_vector<float>(), bv = bs[l].to_vector<float>();
    std::vector<float> next(64 * 16);
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 16; j++) {
        double s = bv[j];
        for (int k = 0; k < width; k++) s += double(hv[i * width + k]) * wv[k * 16 + j];
        next[i * 16 + j] = static_cast<float>(std::tanh(s));
      }
    hv = next;
    width = 16;
  }
  double want = 0;
  for (float v : hv) want += double(v) * v;
  want /= static_cast<double>(hv.size());
  EXPECT_NEAR(loss.item<float>(), want, 1e-5);
}

// Nothing beyond the roots is materialised: every kernel is lowered exactly once.
TEST(MaterialisePass, FusableGraphLowersEachKernelOnce) {
  Tensor a = input({32, 16}), c = input({16});
  Tensor r = ((a * 2.0 + c).exp().sum({1}) + 1.0).sqrt();
  Both b = materialise_both({r});
  expect_same(b);
  EXPECT_EQ(b.pass.items.size(), 1u);
  EXPECT_EQ(b.pass.lowerings, 1);
  EXPECT_EQ(b.reference.lowerings, 1);
}

// A norm nested in two scalar kernels (each has a reduce of its own first): the nest rule
// materialises it once all kernels were lowered, and the two kernels that nested it are lowered
// again.
TEST(MaterialisePass, ReduceNestedTwiceIsMaterialisedAsByTheReference) {
  Tensor a = input({40, 3}), c = input({7}), d = input({5});
  Tensor na = (a * a).sum().reshape({1});
  Tensor r1 = (c * c).sum().reshape({1}) + na;
  Tensor r2 = (d * d).sum().reshape({1}) * na;
  Both b = materialise_both({r1, r2});
  expect_same(b);
  EXPECT_EQ(b.pass.items.size(), 3u);  // na, r1, r2
  EXPECT_EQ(static_cast<int>(b.pass.set.size()) - b.pass.initial, 1);
  EXPECT_EQ(b.pass.lowerings, 5);  // r1, r2; then na, and r1 and r2 again
  auto sumsq = [](const Tensor& t) {
    double s = 0;
    for (float v : t.to_vector<float>()) s += double(v) * v;
    return s;
  };
  const double sa = sumsq(a), sc = sumsq(c), sd = sumsq(d);
  realize({r1, r2});
  EXPECT_NEAR(r1.item<float>(), sc + sa, 1e-4 * (sc + sa));
  EXPECT_NEAR(r2.item<float>(), sd * sa, 1e-4 * sd * sa);
}

// An expensive value fused into an earlier kernel and broadcast by a later one: the later kernel
// asks for it, and the earlier one, which looked at it, is lowered again to load it.
TEST(MaterialisePass, EarlierKernelThatFusedTheNewValueIsLoweredAgain) {
  Tensor x = input({16}), y = input({1, 16});
  Tensor v = (x.exp() + 1.0).log();
  Tensor r1 = v * 2.0;
  Tensor r2 = v.reshape({16, 1}) + y;  // v repeated 16 times: materialised
  Both b = materialise_both({r1, r2});
  expect_same(b);
  EXPECT_EQ(b.pass.items.size(), 3u);  // v, r1, r2
  EXPECT_EQ(b.pass.lowerings, 5);      // r1, r2 (asks for v); v, r1 again, r2
  realize({r1, r2});
  auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  auto r1v = r1.to_vector<float>(), r2v = r2.to_vector<float>();
  for (int i = 0; i < 16; i++) {
    const double vi = std::log(std::exp(double(xv[i])) + 1.0);
    EXPECT_NEAR(r1v[i], 2 * vi, 1e-5);
    for (int j = 0; j < 16; j++) EXPECT_NEAR(r2v[i * 16 + j], vi + yv[j], 1e-5);
  }
}

}  // namespace
