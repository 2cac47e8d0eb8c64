// Printing tensors as PyTorch prints them (torch/_tensor_str.py's rules, written anew here):
// tensor([[1, 2],
//         [3, 4]], dtype=int32)
// one row per line, integers exact, floats in one format for the whole tensor (fixed with four
// decimals, "1." for integral values, scientific where the magnitudes call for it), and beyond
// 1,000 elements the first and last three of every dim around "...".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/tensor_impl.h"

namespace ember {

namespace {

constexpr int64_t kThreshold = 1000;  // elements printed in full up to this many
constexpr int64_t kEdgeItems = 3;     // beyond it: this many at each end of every dim
constexpr size_t kLineWidth = 80;

// One element's text, in the format chosen for the whole tensor.
struct Formatter {
  enum Kind { Integer, Boolean, IntegralFloat, Fixed, Scientific } kind = Fixed;

  std::string text(const Tensor& t, int64_t i, const std::vector<int64_t>& ints,
                   const std::vector<double>& reals) const {
    char buf[64];
    switch (kind) {
      case Integer:  // uint64 from its bits (ints holds them as int64)
        return t.dtype() == kUInt64 ? std::to_string(static_cast<uint64_t>(ints[size_t(i)]))
                                    : std::to_string(ints[static_cast<size_t>(i)]);
      case Boolean:
        return ints[static_cast<size_t>(i)] ? "True" : "False";
      default:
        break;
    }
    const double v = reals[static_cast<size_t>(i)];
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (kind == IntegralFloat) std::snprintf(buf, sizeof buf, "%.0f.", v);
    if (kind == Fixed) std::snprintf(buf, sizeof buf, "%.4f", v);
    if (kind == Scientific) std::snprintf(buf, sizeof buf, "%.4e", v);
    return buf;
  }
};

// PyTorch's choice for floats, from the finite nonzero values: integral values print as "3.",
// others with four decimals, and in scientific notation when the largest is at least 1e8, the
// smallest below 1e-4, or they span more than three orders of magnitude.
Formatter::Kind float_kind(const std::vector<double>& v) {
  double lo = INFINITY, hi = 0;
  bool integral = true;
  for (double x : v) {
    if (!std::isfinite(x) || x == 0) continue;
    const double a = std::fabs(x);
    lo = std::min(lo, a);
    hi = std::max(hi, a);
    integral = integral && std::nearbyint(x) == x;
  }
  if (hi == 0) return integral ? Formatter::IntegralFloat : Formatter::Fixed;
  if (integral) return hi >= 1e8 ? Formatter::Scientific : Formatter::IntegralFloat;
  if (hi / lo > 1000 || hi >= 1e8 || lo < 1e-4) return Formatter::Scientific;
  return Formatter::Fixed;
}

// The indices of dim `d` that are printed (-1 marks the "..." between the ends).
std::vector<int64_t> shown(int64_t size, bool summarize) {
  std::vector<int64_t> ix;
  if (!summarize || size <= 2 * kEdgeItems) {
    for (int64_t i = 0; i < size; i++) ix.push_back(i);
    return ix;
  }
  for (int64_t i = 0; i < kEdgeItems; i++) ix.push_back(i);
  ix.push_back(-1);
  for (int64_t i = size - kEdgeItems; i < size; i++) ix.push_back(i);
  return ix;
}

struct Printer {
  const Tensor& t;
  const DimVector& shape;
  std::vector<int64_t> strides;
  Formatter f;
  std::vector<int64_t> ints;
  std::vector<double> reals;
  bool summarize;
  size_t width = 1;  // of the widest printed element

  // Calls fn(flat index) for every printed element.
  template <class Fn>
  void each(size_t d, int64_t off, Fn&& fn) const {
    if (d == shape.size()) return fn(off);
    for (int64_t i : shown(shape[d], summarize))
      if (i >= 0) each(d + 1, off + i * strides[d], fn);
  }

  void rows(std::ostream& os, size_t d, int64_t off, size_t indent) const {
    os << "[";
    const std::vector<int64_t> ix = shown(shape[d], summarize);
    if (d + 1 == shape.size()) {  // the last dim: elements, wrapped at the line width
      const size_t per_line = std::max<size_t>(1, (kLineWidth - indent - 1) / (width + 2));
      size_t on_line = 0;
      for (size_t k = 0; k < ix.size(); k++) {
        if (k) os << ",";
        if (k && on_line == per_line) {
          os << "\n" << std::string(indent + 1, ' ');
          on_line = 0;
        } else if (k) {
          os << " ";
        }
        if (ix[k] < 0) {
          os << " ...";  // as PyTorch: not padded to the elements' width
        } else {
          std::string s = f.text(t, off + ix[k] * strides[d], ints, reals);
          os << std::string(width > s.size() ? width - s.size() : 0, ' ') << s;
        }
        on_line++;
      }
    } else {  // a block per index: one line each, a blank line between higher blocks
      const std::string gap = std::string(shape.size() - d - 2, '\n');
      for (size_t k = 0; k < ix.size(); k++) {
        if (k) os << ",\n" << gap << std::string(indent + 1, ' ');
        if (ix[k] < 0)
          os << "...";
        else
          rows(os, d + 1, off + ix[k] * strides[d], indent + 1);
      }
    }
    os << "]";
  }
};

}  // namespace

std::string Tensor::toString() const {
  std::ostringstream o;
  o << *this;
  return o.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  const ScalarType dt = t.dtype();
  Printer p{t, t.sizes(), {}, {}, {}, {}, t.numel() > kThreshold};
  p.strides.resize(p.shape.size());
  for (size_t d = p.shape.size(), s = 1; d-- > 0;) {
    p.strides[d] = static_cast<int64_t>(s);
    s *= static_cast<size_t>(p.shape[d]);
  }
  if (is_floating_point(dt)) {
    p.reals = t.to_vector<double>();
    p.f.kind = float_kind(p.reals);
  } else {
    p.ints = t.to_vector<int64_t>();
    p.f.kind = dt == kBool ? Formatter::Boolean : Formatter::Integer;
  }
  os << "tensor(";
  if (t.numel() == 0) {
    os << "[]";
  } else if (p.shape.empty()) {
    os << p.f.text(t, 0, p.ints, p.reals);
  } else {
    p.each(0, 0,
           [&](int64_t i) { p.width = std::max(p.width, p.f.text(t, i, p.ints, p.reals).size()); });
    p.rows(os, 0, 0, 7);  // 7: "tensor("
  }
  if (t.numel() == 0 && p.shape.size() != 1) {  // PyTorch's size=(0, 3)
    os << ", size=(";
    for (size_t d = 0; d < p.shape.size(); d++) os << (d ? ", " : "") << p.shape[d];
    os << (p.shape.size() == 1 ? ",)" : ")");
  }
  if (dt != kFloat32 && dt != kInt64 && dt != kBool) os << ", dtype=" << dt;
  if (t.requires_grad()) os << ", requires_grad=True";
  return os << ")";
}

}  // namespace ember
