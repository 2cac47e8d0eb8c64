// The weight gradient as autograd produces it, dz^T h with the bias gradient (dz's column sums)
// in the same kernel, against double-precision host loops at odd sizes: reduce depths around the
// cache blocks and split-K slices (1 to 10,001), output rows and columns around the register tile
// (1 to 129: clamped row tiles, packed and zero-padded column panels). The row operand is read in
// place (dz) or computed (2 dz - 1, fused into the product alone: packed into a row panel). Runs
// under every ISA level (CMakeLists.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::input;

struct Case {
  int64_t k, n, m;  // dz [k, n], h [k, m]: C [n, m] = dz^T h, bias [n] = sum over k of dz
};

// The cases: every depth with two shapes, and the deep ones (split-K) with the awkward shapes.
std::vector<Case> cases() {
  const int64_t sizes[] = {1, 3, 17, 127, 129};
  std::vector<Case> cs;
  int i = 0;
  for (int64_t k : {1, 3, 17, 127, 129, 1281, 10001}) {
    cs.push_back({k, sizes[i % 5], sizes[(i + 2) % 5]});
    cs.push_back({k, sizes[(i + 4) % 5], sizes[(i + 3) % 5]});
    i++;
  }
  for (int64_t k : {1281, 10001}) {
    cs.push_back({k, 129, 127});
    cs.push_back({k, 127, 129});
    cs.push_back({k, 3, 129});
  }
  return cs;
}

// The kernels a realize of `ts` launched, from DEBUG=3's per-kernel lines (and their plans).
int launches(const std::vector<Tensor>& ts, std::string& log) {
  Context& ctx = Context::get();
  int old = ctx.debug;
  ctx.debug = 3;
  testing::internal::CaptureStderr();
  realize(ts);
  log = testing::internal::GetCapturedStderr();
  ctx.debug = old;
  int n = 0;
  for (size_t at = log.find("  kernel "); at != std::string::npos;
       at = log.find("  kernel ", at + 1))
    n++;
  return n;
}

void check(bool computed) {
  manual_seed(computed ? 22 : 21);
  for (const Case& c : cases()) {
    SCOPED_TRACE("k " + std::to_string(c.k) + ", " + std::to_string(c.n) + "x" +
                 std::to_string(c.m));
    Tensor dz = input({c.k, c.n}), h = input({c.k, c.m});
    Tensor a = computed ? dz * 2 - 1 : dz;
    Tensor w = matmul(a.t(), h), b = a.sum({0});
    std::string log;
    // A computed operand with two consumers is materialised first: the product reads it alone.
    const int kernels =
        launches(computed ? std::vector<Tensor>{w} : std::vector<Tensor>{w, b}, log);
    // Fused: one kernel for both outputs (for the product alone) where the product is a register
    // tile (a depth of 1 is an elementwise product, one row or column a matrix-vector product).
    if (c.k > 4 && c.n > 1 && c.m > 1) {
      EXPECT_EQ(kernels, 1) << log;
      // The paths under test: the computed operand's row panel (at sse2, which has no broadcast
      // load, with 16 columns or more: the broadcast panel, PACK(0,4)), split-K for the deep
      // products.
      if (computed) {
        const bool bcast = kernel_target().rfind("sse2", 0) == 0 && c.m >= 16;
        EXPECT_NE(log.find(bcast ? "PACK(0,4)" : "PACK(0,1)"), std::string::npos) << log;
      }
      if (c.k == 10001 && c.n >= 127) {
        EXPECT_NE(log.find("SPLIT_REDUCE(2,"), std::string::npos) << log;
      }
    }
    auto av = a.contiguous().to_vector<float>(), hv = h.to_vector<float>(),
         wv = w.to_vector<float>(), bv = b.to_vector<float>();
    ASSERT_EQ(wv.size(), static_cast<size_t>(c.n * c.m));
    ASSERT_EQ(bv.size(), static_cast<size_t>(c.n));
    for (int64_t i = 0; i < c.n; i++) {
      double s = 0, mag = 0;
      for (int64_t r = 0; r < c.k; r++) {
        s += av[r * c.n + i];
        mag += std::fabs(double(av[r * c.n + i]));
      }
      ASSERT_NEAR(bv[i], s, 1e-5 * (1 + mag)) << "bias " << i;
      for (int64_t j = 0; j < c.m; j++) {
        double p = 0, pm = 0;
        for (int64_t r = 0; r < c.k; r++) {
          const double t = double(av[r * c.n + i]) * hv[r * c.m + j];
          p += t;
          pm += std::fabs(t);
        }
        ASSERT_NEAR(wv[i * c.m + j], p, 1e-5 * (1 + pm)) << i << "," << j;
      }
    }
  }
}

}  // namespace

TEST(WeightGrad, ProductAndBiasSumsAtOddSizes) { check(false); }
TEST(WeightGrad, ComputedRowOperandAtOddSizes) { check(true); }
