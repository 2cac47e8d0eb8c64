// The fused epilogues of the step's products at odd sizes, against double-precision host loops:
// tanh(x W^T + b) (a layer's forward) and (dz W) (1 - h^2) (its input gradient), for rows in
// {1, 3, 17, 127, 129, 10001}, columns in {1, 3, 17, 127, 129} and K in {1, 8, 128}. The register
// tile's epilogue has two paths (render_tile.cpp): whole column tiles go a vector at a time, the
// columns past the last whole tile and the epilogues without a vector form (tanh) element by
// element; the sizes put each row and column count on both sides of a tile. Runs under every ISA
// level (CMakeLists.txt); all the cases are realized together, so each level compiles one batch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "ember/ember.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::debug3;
using test::input;

struct Case {
  int64_t n, m, k;
  bool tanh;          // tanh(x W^T + b); else (dz W) (1 - h^2)
  Tensor x, w, e, y;  // e: the bias b [m] or the activation h [n, m]
};

std::string name(const Case& c) {
  return std::string(c.tanh ? "tanh(x W^T + b) " : "(dz W)(1 - h^2) ") + std::to_string(c.n) + "x" +
         std::to_string(c.m) + "x" + std::to_string(c.k);
}

// The sum of x_ir w_jr (tanh: w is [m, k]; else [k, m]) in double, with the sum of the terms'
// magnitudes (the float sum's error is bounded by a multiple of it).
void dot(const Case& c, const std::vector<float>& xv, const std::vector<float>& wv, int64_t i,
         int64_t j, double& s, double& mag) {
  s = 0, mag = 0;
  for (int64_t r = 0; r < c.k; r++) {
    const double t = double(xv[i * c.k + r]) * (c.tanh ? wv[j * c.k + r] : wv[r * c.m + j]);
    s += t;
    mag += std::fabs(t);
  }
}

void expect_values(const Case& c) {
  auto xv = c.x.to_vector<float>(), wv = c.w.to_vector<float>(), ev = c.e.to_vector<float>(),
       got = c.y.to_vector<float>();
  ASSERT_EQ(got.size(), static_cast<size_t>(c.n * c.m));
  for (int64_t i = 0; i < c.n; i++)
    for (int64_t j = 0; j < c.m; j++) {
      double s, mag;
      dot(c, xv, wv, i, j, s, mag);
      // The float sum's bound, K u sum |terms| (u = 2^-24; Tensor::sum's stated bound is
      // tighter), then the epilogue's own roundings, a few ulp each.
      const double u = 6e-8;
      double want, tol;
      if (c.tanh) {
        // tanh' <= 1: the pre-activation's error carries over at most.
        want = std::tanh(s + ev[j]);
        tol = (c.k + 2) * u * (mag + std::fabs(ev[j])) + 8 * u * std::fabs(want);
      } else {
        // 1 - h^2 cancels near |h| = 1: h^2's rounding is then an absolute error, times the sum.
        const double h = ev[i * c.m + j];
        want = s * (1 - h * h);
        tol = (c.k + 2) * u * mag * std::fabs(1 - h * h) + 4 * u * std::fabs(s) * (1 + h * h) +
              4 * u * std::fabs(want);
      }
      ASSERT_NEAR(got[i * c.m + j], want, tol + 1e-9) << name(c) << " at " << i << "," << j;
    }
}

TEST(TileEpilogue, BothEpiloguesAtOddSizes) {
  manual_seed(21);
  const std::vector<int64_t> rows = {1, 3, 17, 127, 129, 10001}, cols = {1, 3, 17, 127, 129},
                             ks = {1, 8, 128};
  std::vector<Case> cases;
  // Every row count with every column count, once per epilogue; K cycles through its values so
  // that each (rows, K) and (cols, K) pair occurs.
  for (size_t a = 0; a < rows.size(); a++)
    for (size_t b = 0; b < cols.size(); b++)
      for (bool t : {true, false}) {
        Case c{rows[a], cols[b], ks[(a + b + (t ? 0 : 1)) % ks.size()], t, {}, {}, {}, {}};
        c.x = input({c.n, c.k});
        if (c.tanh) {
          c.w = input({c.m, c.k});
          c.e = input({c.m});
          c.y = (matmul(c.x, c.w.t()) + c.e).tanh();
        } else {
          c.w = input({c.k, c.m});
          c.e = input({c.n, c.m}).tanh();
          c.e.realize();
          c.y = matmul(c.x, c.w) * (1 - c.e * c.e);
        }
        cases.push_back(std::move(c));
      }
  std::vector<Tensor> ys;
  for (auto& c : cases) ys.push_back(c.y);
  realize(ys);
  for (const Case& c : cases) {
    SCOPED_TRACE(name(c));
    expect_values(c);
  }
}

// The step's shape, 10000 x 128 x 128, and the first layer's (K = 8), take the register tile
// (a VECTORIZE action) with both epilogues: the cases above then hold its epilogue, not another
// renderer's.
TEST(TileEpilogue, StepShapesTakeTheRegisterTile) {
  manual_seed(22);
  for (int64_t k : {8, 128}) {
    SCOPED_TRACE(k);
    Case f{10000, 128, k, true, input({10000, k}), input({128, k}), input({128}), {}};
    f.y = (matmul(f.x, f.w.t()) + f.e).tanh();
    std::string log = debug3(f.y);
    EXPECT_NE(log.find("VECTORIZE"), std::string::npos) << log;
    expect_values(f);
    if (k != 128) continue;
    Case g{10000, 128, k, false, input({10000, k}), input({k, 128}), input({10000, 128}).tanh(),
           {}};
    g.e.realize();
    g.y = matmul(g.x, g.w) * (1 - g.e * g.e);
    log = debug3(g.y);
    EXPECT_NE(log.find("VECTORIZE"), std::string::npos) << log;
    expect_values(g);
  }
}

// Without a broadcast load (EMBER_ISA=sse2) a float product of at least 16 columns in the tiled
// kernel reads its row operand from a broadcast panel (PACK(0,4): plan_heuristic.cpp,
// TileRowPanel), packed per row tile when the row operand is read along k, per block when it is
// transposed; a bare product of at least 128 rows and 12 to 15 columns takes the 4 rows x 3 vectors
// tile instead. Rows 1 to 10001 (the panel's clamped last tile; x @ W^T of up to 32 rows takes the
// dot kernel), 12 to 131 columns, K 17 to 300 (a
// blocked reduce), W read in place and transposed, x transposed, against double-precision host
// loops. The values hold at every level; the plans are checked at sse2, so that these cases keep
// covering those paths.
TEST(TileEpilogue, NoFmaBroadcastPanelAtOddSizes) {
  manual_seed(23);
  const char* isa = std::getenv("EMBER_ISA");
  const bool sse2 = isa && std::string(isa) == "sse2";
  struct Shape {
    int64_t n, m, k;
    bool xt;  // x transposed: the row operand read across k
  };
  std::vector<Shape> shapes;
  for (int64_t n : {1, 3, 17, 127, 129, 10001}) shapes.push_back({n, 130, 17, false});
  for (Shape s : {Shape{131, 131, 128, false}, Shape{10001, 127, 128, false},
                  Shape{129, 130, 300, false}, Shape{129, 12, 17, false}, Shape{129, 130, 17, true},
                  Shape{10001, 128, 128, true}, Shape{131, 17, 300, true}})
    shapes.push_back(s);
  for (auto [n, m, k, xt] : shapes)
    for (bool wt : {true, false}) {
      SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m) + "x" + std::to_string(k) +
                   (xt ? " x^T" : " x") + (wt ? " W^T" : " W"));
      Tensor x = xt ? input({k, n}) : input({n, k}), w = wt ? input({m, k}) : input({k, m});
      Tensor y = matmul(xt ? x.t() : x, wt ? w.t() : w);
      std::string log = debug3(y);
      if (sse2 && n >= 128) {
        EXPECT_NE(log.find(m >= 16 ? "PACK(0,4)" : "UPCAST(0,4) UPCAST(1,12) VECTORIZE(1,4)"),
                  std::string::npos)
            << log;
      } else if (sse2 && n > 1 && m >= 16 && !wt) {
        EXPECT_NE(log.find("PACK(0,4)"), std::string::npos) << log;
      }
      auto xv = x.to_vector<float>(), wv = w.to_vector<float>(), got = y.to_vector<float>();
      ASSERT_EQ(got.size(), static_cast<size_t>(n * m));
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
          double s = 0, mag = 0;
          for (int64_t r = 0; r < k; r++) {
            const double t =
                double(xt ? xv[r * n + i] : xv[i * k + r]) * (wt ? wv[j * k + r] : wv[r * m + j]);
            s += t;
            mag += std::fabs(t);
          }
          // The float sum's bound, K u sum |terms| (u = 2^-24), with a little slack.
          ASSERT_NEAR(got[i * m + j], s, (k + 2) * 6e-8 * mag + 1e-9) << i << "," << j;
        }
    }
}

}  // namespace
