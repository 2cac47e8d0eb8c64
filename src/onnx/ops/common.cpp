#include "common.h"

#include <algorithm>

#include "ember/support/shape_str.h"

namespace ember::onnx::ops {

int64_t axis(int64_t a, int64_t rank) {
  if (a < -rank || a >= std::max<int64_t>(rank, 1))
    throw IndexError("axis " + std::to_string(a) + " is out of range for rank " +
                     std::to_string(rank));
  return a < 0 ? a + rank : a;
}

std::vector<int64_t> axes(const std::vector<int64_t>& a, int64_t rank) {
  std::vector<int64_t> r;
  for (int64_t x : a) {
    int64_t d = axis(x, rank);
    if (std::find(r.begin(), r.end(), d) != r.end())
      throw ValueError("axis " + std::to_string(x) + " is given twice");
    r.push_back(d);
  }
  return r;
}

Tensor legacy_broadcast(OpContext& c, const Tensor& a, const Tensor& b) {
  if (c.opset >= 7) return b;
  const bool bc = c.attr_int("broadcast", 0) != 0;
  const int64_t ax = c.attr_int("axis", a.dim() - b.dim());
  if (!bc) {
    if (a.sizes() != b.sizes())
      throw ShapeError("shapes " + support::shape_str(a.sizes()) + " and " +
                       support::shape_str(b.sizes()) +
                       " differ and the node does not set broadcast=1 (opset < 7)");
    return b;
  }
  const int64_t start = ax < 0 ? ax + a.dim() : ax;
  if (start < 0 || start + b.dim() > a.dim())
    throw ShapeError("broadcast axis " + std::to_string(ax) + " does not fit " +
                     support::shape_str(b.sizes()) + " into " + support::shape_str(a.sizes()));
  Shape s = b.shape();
  s.insert(s.end(), static_cast<size_t>(a.dim() - start - b.dim()), 1);
  return b.reshape(s);
}

}  // namespace ember::onnx::ops
