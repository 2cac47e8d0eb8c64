// The tiled products' software prefetches (tile_prefetch.cpp) under every ISA level: the input
// gradient (dz W)(1 - h^2), whose epilogue reads the saved activation h laid out like the output.
// With the columns outside the row tiles (COLS_OUTER, avx2 and sse2), each tile prefetches the
// next tile's lines of h; with the rows outside (avx512), the next tile's rows of h and the
// output. The prefetches cannot change a value: the test checks that the kernel emits them (their
// text names h's buffer) and the values against a double-precision loop, at row counts that are
// not multiples of the tile (6) or the row block (96) and column counts that are not multiples
// of the column tile.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "engine/realize.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::input;

struct Captured {
  std::string source;  // the product's kernel
  int h_buf = -1;      // the index of `h` (realize_one's) among its buffers
};

// Realizes `y` and returns the one launch's kernel text and where `h` is among its buffers.
Captured realize_one(const Tensor& y, const Tensor& h) {
  Captured c;
  engine::LaunchLog log;
  {
    engine::RecordLaunches record(log);
    y.realize();
  }
  for (const engine::Launch& l : log.launches) {
    c.source = l.program ? l.program->source : "";
    for (size_t i = 0; i < l.buffers.size(); i++)
      if (l.buffers[i].get() == h.storage_id()) c.h_buf = static_cast<int>(i);
  }
  EXPECT_EQ(log.launches.size(), 1u);
  return c;
}

// a [n, k] times b ([k, m], or [m, k] when `bt`) in double, row-major [n, m]: each element's sum
// and the sum of its terms' magnitudes (the tolerance's scale).
struct Reference {
  std::vector<double> sum, mag;
};
Reference reference_product(const Tensor& a, const Tensor& b, bool bt) {
  const int64_t n = a.size(0), k = a.size(1), m = bt ? b.size(0) : b.size(1);
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  Reference r{std::vector<double>(n * m, 0.0), std::vector<double>(n * m, 0.0)};
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t q = 0; q < k; q++) {
        const double t = double(av[i * k + q]) * bv[bt ? j * k + q : q * m + j];
        r.sum[i * m + j] += t;
        r.mag[i * m + j] += std::fabs(t);
      }
  return r;
}

TEST(TilePrefetch, InputGradientPrefetchesTheEpilogueOperand) {
  for (auto [n, k, m] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1001, 128, 128}, {1001, 128, 129}, {203, 64, 40}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(k) + "x" + std::to_string(m));
    Tensor dz = input({n, k}), w = input({k, m}), h = input({n, m});
    Tensor y = dz.matmul(w) * (1 - h * h);
    Captured c = realize_one(y, h);
    ASSERT_GE(c.h_buf, 0);
    const std::string& s = c.source;
    const bool cols_outer = s.find("for (int64_t m0") < s.find("for (int64_t n0");
    const size_t step = s.find("m0 += ");
    ASSERT_NE(step, std::string::npos) << s;
    const int64_t tile_cols = std::stoll(s.substr(step + 6));
    const std::string hb = "(b" + std::to_string(c.h_buf) + " + ";
    // With the columns outside, over more than two column tiles: each tile's own lines
    // (tile_prefetch.cpp); else the next row tile's whole rows.
    if (cols_outer && m > 2 * tile_cols) {
      EXPECT_NE(s.find("const char* pw0 = (const char*)" + hb + "0 + pr_*" + std::to_string(m) +
                       " + m0*1)"),
                std::string::npos)
          << s;
      EXPECT_NE(s.find("__builtin_prefetch(pw0 + pwi * " + std::to_string(m * 4) + " + 0, 0, 3)"),
                std::string::npos)
          << s;
    } else {
      EXPECT_NE(s.find("= (const char*)" + hb + "0 + pr_*" + std::to_string(m) + " + 0*1)"),
                std::string::npos)
          << s;
    }
    // Whole tiles store straight from the accumulators (render_tile.cpp's render_direct_store),
    // partial ones through the local tile: n = 1001 has both.
    EXPECT_NE(s.find("const int64_t i = 0, jv = 0;"), std::string::npos) << s;
    EXPECT_NE(s.find(" tl["), std::string::npos) << s;
    auto hv = h.to_vector<float>(), got = y.to_vector<float>();
    const Reference r = reference_product(dz, w, false);
    for (int64_t i = 0; i < n * m; i++) {
      const double hh = hv[i], want = r.sum[i] * (1 - hh * hh);
      ASSERT_NEAR(got[i], want, 2e-6 * r.mag[i] * (1 + hh * hh) + 1e-6) << i;
    }
  }
}

// x W^T with W [OC, C K] row-major, as a 3x3 convolution's product at batch 1 (ResNet's 512x7x7:
// 49 x 512 x 4608): the column operand is transposed and packed block by block, and each tile
// prefetches its share of the next block's columns of W (next_block_cols). The text names W's
// buffer and its row stride (at avx2, whose plan for it is known); the values are checked against a
// double-precision loop, also at sizes that are not multiples of the tile, the column block or the
// reduce block.
TEST(TilePrefetch, TransposedColumnPanelPrefetchesTheNextBlock) {
  for (auto [n, k, m, must] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {49, 4608, 512, true}, {47, 4601, 509, false}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(k) + "x" + std::to_string(m));
    Tensor x = input({n, k}), w = input({m, k});
    Tensor y = x.matmul(w.transpose(0, 1));
    Captured c = realize_one(y, w);
    ASSERT_GE(c.h_buf, 0);
    const std::string& s = c.source;
    const std::string at = "const char* pc0 = (const char*)(b" + std::to_string(c.h_buf) + " + ";
    const bool blocked = s.find("kc += ") != std::string::npos;
    // At avx2 the heuristic's plan packs W^T in 64-deep blocks of 128 columns (no split-K).
    if (must && kernel_target().rfind("avx2", 0) == 0) {
      EXPECT_NE(s.find(at), std::string::npos) << s;
      EXPECT_NE(s.find("__builtin_prefetch(pc0 + pci * " + std::to_string(k * 4) + " + 0, 0, 3)"),
                std::string::npos)
          << s;
    }
    if (s.find(at) != std::string::npos) {
      EXPECT_TRUE(blocked) << s;
    }
    auto got = y.to_vector<float>();
    const Reference r = reference_product(x, w, true);
    for (int64_t i = 0; i < n * m; i++) {
      ASSERT_NEAR(got[i], r.sum[i], 2e-6 * r.mag[i] + 1e-6) << i;
    }
  }
}

}  // namespace
