// Backward parity against libtorch (docs/design.md, Testing): the backward runner of parity.h's
// hook.
//
//   BACKWARD_CASE(Grad, exp_2d) { return b.randn({3, 4}).exp(); }
//
// A body is the same generic body as a PARITY_CASE. The runner builds both backends with
// track_grad (every floating input requires grad and is listed in b.leaves), draws one cotangent
// per floating output from a second seeded stream (identical on both backends), backpropagates
// sum_k sum(out_k * cot_k) and compares, per leaf, the gradient's shape, dtype and values with
// Options::grad_tol (float32: atol 1e-4 / rtol 1e-3); a leaf the outputs do not reach must have an
// undefined grad on both sides (shown as shape [-1]). The forward results are compared too (with
// Options::tol). Each case runs on ember's cpu and interp devices, as forward parity does.
#pragma once
#include "parity.h"

namespace parity {

template <class Case, class B>
std::vector<Host> run_backward(uint64_t seed) {
  B b(seed, true);
  auto r = Case{}(b);
  const std::vector<typename B::T> outs = tensors_of<B>(r);
  Gen cot(seed ^ 0x9e3779b97f4a7c15ULL);
  typename B::T loss;
  bool any = false;
  for (auto& o : outs) {
    if (!o.is_floating_point()) continue;
    Shape s(o.sizes().begin(), o.sizes().end());
    auto c = b.from_host(cot.normal(numel(s)), s, o.scalar_type());
    if (!o.requires_grad()) continue;
    auto term = (o * c).sum();
    loss = any ? loss + term : term;
    any = true;
  }
  if (any) loss.backward();
  std::vector<typename B::T> grads;
  for (auto& l : b.leaves)
    if (l.grad().defined()) grads.push_back(l.grad());
  b.realize_all(grads);
  std::vector<Host> out;
  out.push_back(Host{{static_cast<int64_t>(b.leaves.size())}, ember::kInt64, {}, {}});
  for (auto& l : b.leaves) {
    if (l.grad().defined()) {
      out.push_back(b.host(l.grad()));
    } else {
      Host h;
      h.shape = {-1};  // undefined
      out.push_back(h);
    }
  }
  const std::vector<Host> fwd = hosts_of(b, r);
  out.insert(out.end(), fwd.begin(), fwd.end());
  return out;
}

/// Splits run_backward's result into (grads, forward results).
inline std::pair<std::vector<Host>, std::vector<Host>> split_grads(const std::vector<Host>& v) {
  size_t n = static_cast<size_t>(v.at(0).shape.at(0));
  return {std::vector<Host>(v.begin() + 1, v.begin() + 1 + static_cast<long>(n)),
          std::vector<Host>(v.begin() + 1 + static_cast<long>(n), v.end())};
}

template <class Case>
void check_grad(const char* name) {
  check_against_torch<Case>(
      name, run_backward<Case, TorchB>, run_backward<Case, EmberB>,
      [](const std::vector<Host>& got, const std::vector<Host>& ref, const Options& o) {
        auto [ref_g, ref_f] = split_grads(ref);
        ASSERT_FALSE(ref_g.empty()) << "a backward case without floating leaves (a test bug)";
        auto [got_g, got_f] = split_grads(got);
        std::string diff = compare(got_g, ref_g, o.grad_tol);
        EXPECT_TRUE(diff.empty()) << "gradients (one result per leaf, in creation order):\n"
                                  << diff;
        std::string fdiff = compare(got_f, ref_f, o.tol);
        EXPECT_TRUE(fdiff.empty()) << "forward results:\n" << fdiff;
      });
}

}  // namespace parity

/// Defines one backward parity case (a generic body, as PARITY_CASE) checked by check_grad.
#define BACKWARD_CASE(suite, name, ...) PARITY_DEFINE_CASE_(check_grad, suite, name, __VA_ARGS__)

/// One generic body checked forward as suite.name (check) and backward as grad_suite.grad_name
/// (check_grad), each with the seed of its own name; the Options serve both.
#define PARITY_AND_BACKWARD_CASE(suite, name, grad_suite, grad_name, ...)       \
  PARITY_CASE_STRUCT_(suite, name, __VA_ARGS__);                                \
  TEST(suite, name) { parity::check<suite##_##name##_Case>(#suite "." #name); } \
  TEST(grad_suite, grad_name) {                                                 \
    parity::check_grad<suite##_##name##_Case>(#grad_suite "." #grad_name);      \
  }                                                                             \
  PARITY_CASE_BODY_(suite, name)
