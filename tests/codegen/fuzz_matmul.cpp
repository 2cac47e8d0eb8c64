// Random matrix-product graphs for the codegen fuzz test (fuzz_graph.h): odd and long reduce
// sizes, transposed and computed operands, and the epilogues the tiled renderer fuses.
#include "fuzz_graph.h"

namespace fuzz {

using ember::Shape;

std::vector<Val> build_matmul(uint64_t seed) {
  Rng r(seed);
  static const std::vector<int64_t> sizes = {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 65};
  int64_t n = r.pick(sizes), k = r.pick(sizes), m = r.pick(sizes);
  if (r.coin(0.25)) k = r.uni(100, 300);  // long reduce
  if (r.coin(0.15)) m = r.uni(64, 140);
  if (r.coin(0.15)) {  // reduce longer than one cache block, few outputs (the interp is slow)
    k = r.pick(std::vector<int64_t>{513, 700, 1030, 2100, 4100});
    n = r.uni(1, 13), m = r.pick(std::vector<int64_t>{3, 16, 32, 33});
  }
  Shape batch;
  if (r.coin(0.3)) batch.push_back(r.uni(1, 3));
  ember::ScalarType dt =
      r.coin(0.85) ? ember::kFloat32
                   : r.pick(std::vector<ember::ScalarType>{ember::kFloat64, ember::kInt32});
  auto operand = [&](int64_t rows, int64_t cols, bool bat) {
    Shape s = bat ? batch : Shape{};
    bool tr = r.coin(0.35);
    s.push_back(tr ? cols : rows);
    s.push_back(tr ? rows : cols);
    Val v = make_input(r, s, dt, false);
    if (tr) v.t = v.t.transpose(-1, -2);
    return v;
  };
  Val a = operand(n, k, true), b = operand(k, m, r.coin());
  if (dt != ember::kInt32) {  // computed operands (fused into the product's loads)
    if (r.coin(0.2)) a = same(a, a.t.relu());
    if (r.coin(0.2)) b = join(b, b, b.t * 2 - 1, 2);
  }
  Val c;
  if (r.coin(0.15) && dt != ember::kInt32) {
    // Pairwise squared distances: sum_k (a[n,k] - b[k,m])^2, a non-product tiled term.
    Tensor d = a.t.unsqueeze(-2) - b.t.transpose(-1, -2).unsqueeze(-3);
    c = join(a, b, (d * d).sum({-1}), 1);
    c.frac = 2 * std::max(a.frac, b.frac);
    c.mag = 2 * (std::max(a.mag, b.mag) + 1) + log2ceil(k);
  } else {
    c = join(a, b, ember::matmul(a.t, b.t), 0);
    c.frac = a.frac + b.frac;
    c.mag = a.mag + b.mag + log2ceil(k);
  }
  switch (r.uni(0, 4)) {
    case 0: {  // bias
      Val bias = make_input(r, {m}, dt, false);
      c = join(c, bias, c.t + bias.t, 1);
      break;
    }
    case 1:
      if (is_float(c.t)) c = inexact(c, c.t.tanh());
      break;
    case 2:
      c = same(c, c.t.relu());
      break;
    default:
      break;
  }
  return {c};
}

}  // namespace fuzz
