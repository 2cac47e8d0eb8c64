// Ops that fit no family: MaxUnpool, Det (Gaussian elimination with partial pivoting, unrolled),
// and the ops whose output size depends on values, computed on the host from the realized input:
// Unique, NonMaxSuppression.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

#include "common.h"
#include "ember/indexing.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
// MaxUnpool: X's values written at I's flat positions (MaxPool's Indices, which index the
// pooled input of the shape the pooling arithmetic gives), zeros elsewhere; a larger
// output_shape pads that result at the end of each dim.
std::vector<Tensor> max_unpool(OpContext& c) {
  const Tensor& x = c.in(0);
  const size_t n = static_cast<size_t>(x.dim() - 2);
  const IntList k = c.attr_ints("kernel_shape"), s = c.attr_ints("strides", IntList(n, 1)),
                p = c.attr_ints("pads", IntList(2 * n, 0));
  Shape inferred = {x.size(0), x.size(1)};
  for (size_t i = 0; i < n; i++)
    inferred.push_back((x.size(2 + static_cast<int64_t>(i)) - 1) * s[i] + k[i] - p[i] - p[i + n]);
  int64_t total = 1;
  for (auto d : inferred) total *= d;
  Tensor flat = zeros({total}, x.dtype());
  Tensor y = scatter(flat, 0, c.in(1).to(kInt64).reshape({-1}), x.reshape({-1})).reshape(inferred);
  if (!c.has(2)) return one(y);
  const Shape out = c.ints_of(2);
  if (out.size() != inferred.size())
    throw ShapeError("output_shape " + support::shape_str(out) + " has the wrong rank");
  IntList grow;
  for (size_t i = out.size(); i-- > 0;) {
    if (out[i] < inferred[i])
      throw ShapeError("output_shape " + support::shape_str(out) + " is smaller than " +
                       support::shape_str(inferred));
    grow.insert(grow.end(), {0, out[i] - inferred[i]});
  }
  return one(constant_pad_nd(y, grow));
}

// det A by elimination: at step k the row with the largest |A[i, k]| (i >= k) is swapped to row
// k through a permutation product, which flips the sign; the pivots' product is the determinant.
std::vector<Tensor> det(OpContext& c) {
  const Tensor& a0 = c.in(0);
  if (a0.dim() < 2 || a0.size(-1) != a0.size(-2))
    throw ShapeError("Det takes [..., n, n], got " + support::shape_str(a0.sizes()));
  const int64_t n = a0.size(-1);
  Tensor a = a0.to(kFloat64);
  Tensor result = ones(Shape(a0.sizes().begin(), a0.sizes().end() - 2), kFloat64);
  Tensor rows = arange(n);
  for (int64_t k = 0; k < n; k++) {
    // Pivot: argmax |a[i, k]| over i >= k (rows above k are masked out).
    Tensor col = where(rows >= k, a.select(-1, k).abs(), Scalar(-1.0));
    Tensor p = col.argmax(-1, true);  // [..., 1]
    Tensor swap = (p != k).to(kFloat64).squeeze(-1);
    result = result * (1.0 - swap * 2);
    // Permutation swapping rows k and p: e_k <-> e_p.
    Tensor is_k = rows == k, is_p = rows == p;                            // [n], [..., n]
    Tensor src = where(is_k, p, where(is_p, full({}, k, kInt64), rows));  // row i takes row src[i]
    Tensor perm = (src.unsqueeze(-1) == arange(n)).to(kFloat64);          // [..., n, n]
    a = perm.matmul(a);
    Tensor pivot = a.select(-2, k).select(-1, k);
    result = result * pivot;
    // Eliminate below the pivot (a zero pivot gives det 0: the factors stay finite).
    Tensor safe = where(pivot == 0, full({}, 1.0, kFloat64), pivot);
    Tensor factor = where(rows > k, a.select(-1, k) / safe.unsqueeze(-1), Scalar(0.0));  // [..., n]
    a = a - factor.unsqueeze(-1) * a.select(-2, k).unsqueeze(-2);
  }
  return one(result.to(a0.dtype()));
}

// Unique over the flattened input or along `axis`: unique slices in sorted or first-occurrence
// order, with first indices, inverse indices and counts.
std::vector<Tensor> unique(OpContext& c) {
  const Tensor& x = c.in(0);
  const bool sorted = c.attr_int("sorted", 1) != 0, has_axis = c.has_attr("axis");
  const int64_t a = has_axis ? axis(c.attr_int("axis"), x.dim()) : 0;
  Tensor v = has_axis ? x.transpose(0, a).contiguous() : x.reshape({-1});
  const int64_t n = v.size(0), w = n ? v.numel() / n : 0;
  const auto data = v.to_vector<double>();
  auto slice_less = [&](int64_t i, int64_t j) {
    return std::lexicographical_compare(data.begin() + i * w, data.begin() + (i + 1) * w,
                                        data.begin() + j * w, data.begin() + (j + 1) * w);
  };
  auto slice_eq = [&](int64_t i, int64_t j) {
    return std::equal(data.begin() + i * w, data.begin() + (i + 1) * w, data.begin() + j * w);
  };
  std::vector<int64_t> first;  // one row per unique slice, by first occurrence
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) {
    auto it = std::find_if(first.begin(), first.end(), [&](int64_t f) { return slice_eq(f, i); });
    if (it == first.end()) {
      first.push_back(i);
      it = first.end() - 1;
    }
    inverse[i] = it - first.begin();
  }
  std::vector<int64_t> order(first.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t p, int64_t q) { return slice_less(first[p], first[q]); });
  std::vector<int64_t> rank(order.size()), idx, counts(order.size(), 0);
  for (size_t r = 0; r < order.size(); r++) rank[order[r]] = static_cast<int64_t>(r);
  for (auto o : order) idx.push_back(first[o]);
  for (auto& i : inverse) i = rank[i];
  for (auto i : inverse) counts[i]++;
  const int64_t u = static_cast<int64_t>(idx.size());
  Tensor y = index_select(v, 0, from_vector(idx, Shape{u}));
  if (has_axis) y = y.transpose(0, a);
  return {y, from_vector(idx, Shape{u}), from_vector(inverse, Shape{n}),
          from_vector(counts, Shape{u})};
}

// NonMaxSuppression: per batch and class, boxes by decreasing score (stable), each kept unless
// its IoU with a kept box exceeds the threshold; at most max_output_boxes_per_class; scores
// below score_threshold are dropped. Output rows [batch, class, box].
std::vector<Tensor> nms(OpContext& c) {
  const Tensor& boxes = c.in(0);   // [B, N, 4]
  const Tensor& scores = c.in(1);  // [B, C, N]
  const int64_t max_out = c.has(2) && c.in(2).numel() ? c.ints_of(2).at(0) : 0;
  const double iou_th = c.has(3) && c.in(3).numel() ? c.floats_of(3).at(0) : 0;
  const bool has_score_th = c.has(4) && c.in(4).numel();
  const double score_th = has_score_th ? c.floats_of(4).at(0) : 0;
  const bool center = c.attr_int("center_point_box", 0) != 0;
  const int64_t B = boxes.size(0), N = boxes.size(1), C = scores.size(1);
  const auto bx = boxes.to_vector<double>(), sc = scores.to_vector<double>();
  auto corners = [&](int64_t b, int64_t i) {
    const double* p = &bx[static_cast<size_t>((b * N + i) * 4)];
    if (center)
      return std::array<double, 4>{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2,
                                   p[0] + p[2] / 2};
    return std::array<double, 4>{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]),
                                 std::max(p[1], p[3])};
  };
  auto iou = [&](int64_t b, int64_t i, int64_t j) {
    auto p = corners(b, i), q = corners(b, j);
    const double ih = std::max(0.0, std::min(p[2], q[2]) - std::max(p[0], q[0]));
    const double iw = std::max(0.0, std::min(p[3], q[3]) - std::max(p[1], q[1]));
    const double inter = ih * iw, area_p = (p[2] - p[0]) * (p[3] - p[1]),
                 area_q = (q[2] - q[0]) * (q[3] - q[1]);
    const double uni = area_p + area_q - inter;
    return uni > 0 ? inter / uni : 0.0;
  };
  std::vector<int64_t> out;
  for (int64_t b = 0; b < B; b++)
    for (int64_t k = 0; k < C; k++) {
      const double* s = &sc[static_cast<size_t>((b * C + k) * N)];
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < N; i++)
        if (!has_score_th || s[i] > score_th) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t j : kept) ok = ok && iou(b, i, j) <= iou_th;
        if (ok) kept.push_back(i);
      }
      for (int64_t i : kept) out.insert(out.end(), {b, k, i});
    }
  const int64_t rows = static_cast<int64_t>(out.size() / 3);
  return one(from_vector(out, Shape{rows, 3}));
}

}  // namespace ember::onnx::ops
