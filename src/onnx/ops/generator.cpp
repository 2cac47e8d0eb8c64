// Values made from attributes and sizes: Constant, ConstantOfShape, Range, EyeLike.
#include <cmath>

#include "../tensor_proto.h"
#include "common.h"

namespace ember::onnx::ops {
std::vector<Tensor> constant(OpContext& c) {
  if (c.has_attr("value")) return one(c.attr_tensor("value"));
  if (c.has_attr("value_float")) return one(full({}, c.attr_float("value_float"), kFloat32));
  if (c.has_attr("value_int")) return one(full({}, c.attr_int("value_int"), kInt64));
  if (c.has_attr("value_floats")) {
    auto v = c.attr_floats("value_floats");
    return one(from_vector(std::vector<float>(v.begin(), v.end())));
  }
  if (c.has_attr("value_ints")) return one(from_vector(c.attr_ints("value_ints")));
  if (c.has_attr("value_string") || c.has_attr("value_strings"))
    throw UnsupportedError("element type string is not supported");
  if (c.has_attr("sparse_value")) throw UnsupportedError("sparse tensors are not supported");
  throw ValueError("Constant has no value attribute");
}

std::vector<Tensor> constant_of_shape(OpContext& c) {
  const auto s = c.ints_of(0);
  Tensor v = c.has_attr("value") ? c.attr_tensor("value") : zeros({1});
  if (v.numel() != 1) throw ShapeError("value must hold one element");
  return one(v.reshape({}).expand(s).contiguous());
}

// Range: start + i * delta for i < max(ceil((limit - start) / delta), 0), in start's type.
std::vector<Tensor> range(OpContext& c) {
  const Tensor& s = c.in(0);
  if (s.dtype() != c.in(1).dtype() || s.dtype() != c.in(2).dtype())
    throw DTypeError("start, limit and delta must have one element type");
  const double start = c.floats_of(0).at(0), limit = c.floats_of(1).at(0),
               delta = c.floats_of(2).at(0);
  if (delta == 0) throw ValueError("delta must not be 0");
  const auto n = static_cast<int64_t>(std::max(std::ceil((limit - start) / delta), 0.0));
  if (s.is_floating_point()) {
    // In the element type, as the reference computes it: start + i * delta.
    Tensor i = arange(n).to(s.dtype());
    return one(s.reshape({}) + i * c.in(2).reshape({}));
  }
  const int64_t a = c.ints_of(0).at(0), d = c.ints_of(2).at(0);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[i] = a + i * d;
  return one(from_vector(v).to(s.dtype()));
}

std::vector<Tensor> eye_like(OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.dim() != 2) throw ShapeError("EyeLike takes a 2-d input");
  const ScalarType t =
      c.has_attr("dtype")
          ? require_dtype(static_cast<int32_t>(c.attr_int("dtype")), "EyeLike's dtype")
          : x.dtype();
  const int64_t k = c.attr_int("k", 0), rows = x.size(0), cols = x.size(1);
  Tensor on = (arange(cols) - arange(rows).unsqueeze(-1)) == k;
  return one(on.to(t));
}

}  // namespace ember::onnx::ops
