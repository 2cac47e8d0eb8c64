// Reading tensor data: realize, item, to_vector, printing. These are the points where the lazy
// graph is forced.
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "engine/realize.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {

// A realized, contiguous storage holding t's elements in row-major order.
std::shared_ptr<ir::Storage> contiguous_storage(const Tensor& t) {
  if (engine::capturing())
    throw Error(
        "jit: reading tensor data (item, to_vector, printing) inside a jitted function is not "
        "allowed: the value would be frozen into the replay; keep the computation in tensors "
        "or read the data outside the function");
  engine::realize_tensors({t});
  const ir::NodeRef& n = t.node();
  if (n->op == ir::Op::BUFFER) return n->storage;
  Tensor c = detail::make_tensor_rg(ir::make_node(ir::Op::CONTIGUOUS, n->dtype, {n}), false);
  engine::realize_tensors({c});
  return c.node()->storage;
}

template <typename T>
T convert(const void* p, ScalarType t, int64_t i) {
  switch (t) {
    case kBool:
    case kUInt8:
      return static_cast<T>(static_cast<const uint8_t*>(p)[i]);
    case kInt32:
      return static_cast<T>(static_cast<const int32_t*>(p)[i]);
    case kInt64:
      return static_cast<T>(static_cast<const int64_t*>(p)[i]);
    case kFloat32:
      return static_cast<T>(static_cast<const float*>(p)[i]);
    case kFloat64:
      return static_cast<T>(static_cast<const double*>(p)[i]);
  }
  return T{};
}

}  // namespace

const Tensor& Tensor::realize() const {
  engine::realize_tensors({*this});
  return *this;
}

void realize(const std::vector<Tensor>& ts) { engine::realize_tensors(ts); }

template <typename T>
std::vector<T> Tensor::to_vector() const {
  auto s = contiguous_storage(*this);
  std::vector<T> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  const void* p = s->data();
  for (size_t i = 0; i < out.size(); i++) out[i] = convert<T>(p, dtype(), static_cast<int64_t>(i));
  return out;
}

template <typename T>
T Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("a Tensor with " + std::to_string(numel()) +
                     " elements cannot be converted to Scalar (shape " + ir::shape_str(sizes()) +
                     ")");
  return to_vector<T>()[0];
}

#define EMBER_INSTANTIATE(T)                            \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(int32_t)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint8_t)
EMBER_INSTANTIATE(bool)
#undef EMBER_INSTANTIATE

std::string Tensor::toString() const {
  std::ostringstream o;
  o << *this;
  return o.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  auto v = t.to_vector<double>();
  os << "tensor(";
  const Shape& s = t.sizes();
  // Row-major print with brackets per dim.
  std::function<void(size_t, size_t)> rec = [&](size_t d, size_t off) {
    if (d == s.size()) {
      os << v[off];
      return;
    }
    os << "[";
    size_t stride = 1;
    for (size_t k = d + 1; k < s.size(); k++) stride *= static_cast<size_t>(s[k]);
    for (int64_t i = 0; i < s[d]; i++) {
      if (i) os << ", ";
      if (i >= 6 && s[d] > 8) {
        os << "...";
        break;
      }
      rec(d + 1, off + static_cast<size_t>(i) * stride);
    }
    os << "]";
  };
  if (!v.empty() || s.empty())
    rec(0, 0);
  else
    os << "[]";
  return os << ", dtype=" << dtype_name(t.dtype()) << ", shape=" << ir::shape_str(s) << ")";
}

}  // namespace ember
