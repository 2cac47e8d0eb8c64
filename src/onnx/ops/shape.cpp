// Shape and layout: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split,
// Slice, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Trilu. Sizes that ONNX passes as tensors
// (Reshape's shape, Slice's starts, ...) are read on the host: ember's shapes are static.
#include <algorithm>
#include <limits>
#include <numeric>

#include "common.h"
#include "ember/padding.h"
#include "ember/shape_ops.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
namespace {

// A list from an attribute before `since`, from input `index` from then on (nullopt: absent).
std::optional<std::vector<int64_t>> ints_attr_or_input(OpContext& c, int64_t since,
                                                       const char* attr, size_t index) {
  if (c.opset < since) {
    if (!c.has_attr(attr)) return std::nullopt;
    return c.attr_ints(attr);
  }
  if (!c.has(index)) return std::nullopt;
  return c.ints_of(index);
}

}  // namespace

std::vector<Tensor> shape(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t r = x.dim();
  auto clampi = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  const int64_t start = clampi(c.attr_int("start", 0)), end = clampi(c.attr_int("end", r));
  std::vector<int64_t> s(x.sizes().begin() + start, x.sizes().begin() + std::max(start, end));
  return one(from_vector(s));
}

std::vector<Tensor> size(OpContext& c) { return one(full({}, c.in(0).numel(), kInt64)); }

std::vector<Tensor> reshape(OpContext& c) {
  c.ignore_attr({"consumed_inputs"});
  const Tensor& x = c.in(0);
  std::vector<int64_t> s = c.opset < 5 ? c.attr_ints("shape") : c.ints_of(1);
  const bool allow_zero = c.opset >= 14 && c.attr_int("allowzero", 0) != 0;
  for (size_t i = 0; i < s.size(); i++)
    if (s[i] == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= x.dim())
        throw ShapeError("shape entry " + std::to_string(i) +
                         " is 0 (copy) beyond the input's rank");
      s[i] = x.size(static_cast<int64_t>(i));
    }
  return one(x.reshape(s));
}

std::vector<Tensor> flatten(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t r = x.dim();
  int64_t a = c.attr_int("axis", 1);
  if (a < 0) a += r;
  if (a < 0 || a > r)
    throw IndexError("axis " + std::to_string(a) + " out of range for rank " + std::to_string(r));
  int64_t lead = 1;
  for (int64_t i = 0; i < a; i++) lead *= x.size(i);
  return one(x.reshape({lead, lead == 0 ? 0 : x.numel() / lead}));
}

std::vector<Tensor> squeeze(OpContext& c) {
  const Tensor& x = c.in(0);
  auto given = ints_attr_or_input(c, 13, "axes", 1);
  Shape s;
  if (!given) {
    for (int64_t d : x.sizes())
      if (d != 1) s.push_back(d);
    return one(x.reshape(s));
  }
  const auto ax = axes(*given, x.dim());
  for (int64_t d = 0; d < x.dim(); d++) {
    const bool drop = std::find(ax.begin(), ax.end(), d) != ax.end();
    if (drop && x.size(d) != 1)
      throw ShapeError("cannot squeeze axis " + std::to_string(d) + " of size " +
                       std::to_string(x.size(d)));
    if (!drop) s.push_back(x.size(d));
  }
  return one(x.reshape(s));
}

std::vector<Tensor> unsqueeze(OpContext& c) {
  const Tensor& x = c.in(0);
  auto given = ints_attr_or_input(c, 13, "axes", 1);
  if (!given) throw ValueError("axes are required");
  const int64_t out_rank = x.dim() + static_cast<int64_t>(given->size());
  auto ax = axes(*given, out_rank);
  std::sort(ax.begin(), ax.end());
  Shape s = x.shape();
  for (int64_t a : ax) s.insert(s.begin() + a, 1);
  return one(x.reshape(s));
}

std::vector<Tensor> transpose(OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> rev(static_cast<size_t>(x.dim()));
  std::iota(rev.rbegin(), rev.rend(), 0);
  const auto perm = c.attr_ints("perm", rev);
  if (static_cast<int64_t>(perm.size()) != x.dim())
    throw ShapeError("perm " + support::shape_str(perm) + " does not match rank " +
                     std::to_string(x.dim()));
  return one(x.permute(perm));
}

std::vector<Tensor> concat(OpContext& c) {
  const int64_t a = c.attr_int("axis", c.opset < 4 ? std::optional<int64_t>(1) : std::nullopt);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < c.num_inputs(); i++) {
    if (c.in(i).dtype() != c.in(0).dtype()) throw DTypeError("inputs have different element types");
    parts.push_back(c.in(i));
  }
  return one(cat(parts, axis(a, parts.at(0).dim())));
}

std::vector<Tensor> split(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 0), x.dim());
  std::optional<std::vector<int64_t>> sizes;
  if (c.opset < 2)
    sizes = c.has(1)              ? std::optional(c.ints_of(1))
            : c.has_attr("split") ? std::optional(c.attr_ints("split"))
                                  : std::nullopt;
  else
    sizes = ints_attr_or_input(c, 13, "split", 1);
  const int64_t n = static_cast<int64_t>(c.num_outputs()), total = x.size(a);
  if (!sizes) {
    if (total % n)
      throw ShapeError("dim of size " + std::to_string(total) + " does not split into " +
                       std::to_string(n) + " equal parts");
    sizes = std::vector<int64_t>(static_cast<size_t>(n), total / n);
  }
  if (static_cast<int64_t>(sizes->size()) != n ||
      std::accumulate(sizes->begin(), sizes->end(), int64_t{0}) != total)
    throw ShapeError("split sizes " + support::shape_str(*sizes) + " do not cover a dim of " +
                     std::to_string(total) + " in " + std::to_string(n) + " outputs");
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : *sizes) {
    out.push_back(x.narrow(a, at, s));
    at += s;
  }
  return out;
}

namespace {

// One dim of Slice with ONNX's clamping (onnx/defs/tensor/defs.cc, Slice-13): a positive step
// clamps start and end to [0, size], a negative one to [0, size - 1] and [-1, size - 1].
Tensor slice_dim(Tensor x, int64_t d, int64_t start, int64_t end, int64_t step) {
  const int64_t n = x.size(d);
  if (step == 0) throw ValueError("slice step must not be 0");
  auto norm = [&](int64_t v) { return v < 0 ? (v < -n ? -1 : v + n) : v; };  // overflow-safe
  int64_t s = norm(start), e = norm(end);
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    return e <= s ? x.narrow(d, 0, 0) : x.slice(d, s, e, step);
  }
  s = std::clamp<int64_t>(s, 0, n - 1);
  e = std::clamp<int64_t>(e, -1, n - 1);
  if (s <= e || n == 0) return x.narrow(d, 0, 0);
  // Reversed: element s, s + step, ... > e is element n-1-s, ... of the flipped dim.
  return x.flip({d}).slice(d, n - 1 - s, n - 1 - e, -step);
}

}  // namespace

std::vector<Tensor> slice(OpContext& c) {
  Tensor x = c.in(0);
  std::vector<int64_t> starts, ends, ax, steps;
  if (c.opset < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    ax = c.attr_ints("axes", std::vector<int64_t>{});
  } else {
    starts = c.ints_of(1);
    ends = c.ints_of(2);
    if (c.has(3)) ax = c.ints_of(3);
    if (c.has(4)) steps = c.ints_of(4);
  }
  if (ax.empty())
    for (size_t i = 0; i < starts.size(); i++) ax.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || ax.size() != starts.size() || steps.size() != starts.size())
    throw ShapeError("starts, ends, axes and steps must have the same length");
  const auto d = axes(ax, x.dim());
  for (size_t i = 0; i < d.size(); i++) x = slice_dim(x, d[i], starts[i], ends[i], steps[i]);
  return one(x);
}

std::vector<Tensor> expand(OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> s = c.ints_of(1);
  // Bidirectional broadcasting: the result has the larger size of each aligned dim.
  const size_t rank = std::max<size_t>(s.size(), static_cast<size_t>(x.dim()));
  Shape xs = x.shape();
  xs.insert(xs.begin(), rank - xs.size(), 1);
  s.insert(s.begin(), rank - s.size(), 1);
  for (size_t i = 0; i < rank; i++) {
    if (xs[i] != s[i] && xs[i] != 1 && s[i] != 1)
      throw ShapeError("shape " + support::shape_str(x.sizes()) + " does not broadcast to " +
                       support::shape_str(s));
    s[i] = xs[i] == 1 ? s[i] : xs[i];
  }
  return one(x.reshape(xs).expand(s));
}

std::vector<Tensor> tile_op(OpContext& c) {
  if (c.opset < 6) throw UnsupportedError("Tile-1 (tiles and axis inputs) is not supported");
  const Tensor& x = c.in(0);
  const auto reps = c.ints_of(1);
  if (static_cast<int64_t>(reps.size()) != x.dim())
    throw ShapeError("repeats " + support::shape_str(reps) + " do not match rank " +
                     std::to_string(x.dim()));
  return one(tile(x, reps));
}

std::vector<Tensor> pad_op(OpContext& c) {
  const Tensor& x = c.in(0);
  const std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> p;
  double value = 0;
  if (c.opset < 11) {
    p = c.attr_ints(c.opset < 2 ? "paddings" : "pads");
    value = c.attr_float("value", 0.0);
  } else {
    p = c.ints_of(1);
    if (c.has(2)) value = c.floats_of(2).at(0);
  }
  const size_t r = static_cast<size_t>(x.dim());
  if (p.size() != 2 * r)
    throw ShapeError("pads " + support::shape_str(p) + " must hold 2 values per dim (rank " +
                     std::to_string(r) + ")");
  IntList tp;  // (before, after) from the last dim
  for (size_t d = r; d-- > 0;) {
    tp.push_back(p[d]);
    tp.push_back(p[d + r]);
  }
  if (mode == "constant") {
    Scalar v = x.is_floating_point() ? Scalar(value) : Scalar(static_cast<int64_t>(value));
    return one(constant_pad_nd(x, tp, v));
  }
  if (mode == "reflect") return one(pad(x, tp, PadMode::Reflect));
  if (mode == "edge") return one(pad(x, tp, PadMode::Replicate));
  throw UnsupportedError("pad mode '" + mode + "' is not supported");
}

std::vector<Tensor> depth_to_space(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t b = c.attr_int("blocksize");
  const std::string mode = c.attr_string("mode", "DCR");
  if (x.dim() != 4 || x.size(1) % (b * b))
    throw ShapeError("expects [N, C, H, W] with C divisible by blocksize^2");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), Co = C / (b * b);
  Tensor y = mode == "DCR" ? x.reshape({N, b, b, Co, H, W}).permute({0, 3, 4, 1, 5, 2})
                           : x.reshape({N, Co, b, b, H, W}).permute({0, 1, 4, 2, 5, 3});
  if (mode != "DCR" && mode != "CRD")
    throw ValueError("mode must be DCR or CRD, got '" + mode + "'");
  return one(y.reshape({N, Co, H * b, W * b}));
}

std::vector<Tensor> space_to_depth(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t b = c.attr_int("blocksize");
  if (x.dim() != 4 || x.size(2) % b || x.size(3) % b)
    throw ShapeError("expects [N, C, H, W] with H and W divisible by blocksize");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  return one(x.reshape({N, C, H / b, b, W / b, b})
                 .permute({0, 3, 5, 1, 2, 4})
                 .reshape({N, C * b * b, H / b, W / b}));
}

std::vector<Tensor> trilu(OpContext& c) {
  const int64_t k = c.has(1) ? c.ints_of(1).at(0) : 0;
  return one(c.attr_int("upper", 1) ? triu(c.in(0), k) : tril(c.in(0), k));
}

}  // namespace ember::onnx::ops
