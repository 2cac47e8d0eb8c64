// Movement ops: views expressed as index arithmetic (reshape, permute, expand, pad, shrink, flip)
// and the composites built on them (slicing, cat, stack, split, gather).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ember/jit.h"
#include "tensor/tensor_impl.h"

namespace ember {

using detail::make_tensor;
using detail::node_of;
using detail::wrap_dim;
using ir::NodeRef;
using ir::Op;

namespace {

Tensor movement(const Tensor& t, Op op, std::vector<int64_t> ints) {
  ir::Arg a;
  a.ints = ints;  // and the vector takes the inferred shape
  return make_tensor(ir::make_node(op, t.dtype(), {node_of(t)}, std::move(a), std::move(ints)),
                     {&t});
}

std::string list_str(const std::vector<int64_t>& v) { return ir::shape_str(v); }

}  // namespace

Tensor Tensor::reshape(IntList shape) const {
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape: only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      throw ShapeError("reshape: invalid shape dimension " + std::to_string(shape[i]));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      throw ShapeError("shape '" + list_str(shape) + "' is invalid for input of size " +
                       std::to_string(numel()));
    shape[infer] = numel() / known;
  }
  if (ir::shape_numel(shape) != numel())
    throw ShapeError("shape '" + list_str(shape) + "' is invalid for input of size " +
                     std::to_string(numel()) + " (input shape " + list_str(sizes()) + ")");
  if (shape == sizes()) return *this;
  return movement(*this, Op::RESHAPE, shape);
}

Tensor Tensor::permute(IntList dims) const {
  if (static_cast<int64_t>(dims.size()) != dim())
    throw IndexError("permute: number of dims " + list_str(dims) + " does not match the tensor's " +
                     std::to_string(dim()) + " dims");
  std::vector<bool> seen(dims.size());
  for (auto& d : dims) {
    d = wrap_dim(d, dim());
    if (seen[d]) throw IndexError("permute: repeated dim in " + list_str(dims));
    seen[d] = true;
  }
  bool identity = true;
  for (size_t i = 0; i < dims.size(); i++) identity &= dims[i] == static_cast<int64_t>(i);
  if (identity) return *this;
  return movement(*this, Op::PERMUTE, dims);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  if (dim() == 0) return *this;
  d0 = wrap_dim(d0, dim());
  d1 = wrap_dim(d1, dim());
  std::vector<int64_t> order(dim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[d0], order[d1]);
  return permute(order);
}

Tensor Tensor::t() const {
  if (dim() > 2)
    throw IndexError("t() expects a tensor with <= 2 dims, but self is " + std::to_string(dim()) +
                     "D");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::expand(IntList shape) const {
  const DimVector& in = sizes();
  if (shape.size() < in.size())
    throw ShapeError("expand: the number of sizes provided (" + std::to_string(shape.size()) +
                     ") must be greater or equal to the number of dimensions in the tensor (" +
                     std::to_string(in.size()) + ")");
  size_t lead = shape.size() - in.size();
  for (size_t i = 0; i < shape.size(); i++) {
    if (i < lead) {
      if (shape[i] < 0)
        throw ShapeError("expand: -1 is not allowed in a leading, non-existing dimension");
      continue;
    }
    int64_t d = in[i - lead];
    if (shape[i] == -1) shape[i] = d;
    if (d != shape[i] && d != 1)
      throw ShapeError("expand: the expanded size of the tensor (" + std::to_string(shape[i]) +
                       ") must match the existing size (" + std::to_string(d) +
                       ") at non-singleton dimension " + std::to_string(i) +
                       ". Target sizes: " + list_str(shape) + ". Tensor sizes: " + list_str(in));
  }
  if (shape == in) return *this;
  return make_tensor(detail::broadcast_to(node_of(*this), shape), {this});
}

Tensor Tensor::squeeze() const {
  Shape s;
  for (auto d : sizes())
    if (d != 1) s.push_back(d);
  return reshape(s);
}
Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0) return *this;
  d = wrap_dim(d, dim());
  if (sizes()[d] != 1) return *this;
  Shape s = sizes();
  s.erase(s.begin() + d);
  return reshape(s);
}
Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1);
  Shape s = sizes();
  s.insert(s.begin() + d, 1);
  return reshape(s);
}
Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape({1});
  start = wrap_dim(start, dim());
  end = wrap_dim(end, dim());
  if (start > end)
    throw IndexError("flatten() has invalid args: start_dim cannot come after end_dim");
  Shape s(sizes().begin(), sizes().begin() + start);
  int64_t m = 1;
  for (int64_t i = start; i <= end; i++) m *= sizes()[i];
  s.push_back(m);
  s.insert(s.end(), sizes().begin() + end + 1, sizes().end());
  return reshape(s);
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  if (dim() == 0) throw IndexError("slice() cannot be applied to a 0-dim tensor");
  d = wrap_dim(d, dim());
  if (step <= 0) throw ValueError("slice step must be positive, got " + std::to_string(step));
  int64_t n = sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  std::vector<int64_t> b;
  for (int64_t i = 0; i < dim(); i++) {
    b.push_back(i == d ? s : 0);
    b.push_back(i == d ? e : sizes()[i]);
  }
  Tensor r = (s == 0 && e == n) ? *this : movement(*this, Op::SHRINK, b);
  if (step == 1) return r;
  // Strided slice: pad to a multiple of step, split the dim into (count, step), keep index 0.
  int64_t len = e - s, count = (len + step - 1) / step;
  int64_t extra = count * step - len;
  if (extra) {
    std::vector<int64_t> p(2 * dim(), 0);
    p[2 * d + 1] = extra;
    r = movement(r, Op::PAD, p);
  }
  Shape split = r.sizes();
  split[d] = count;
  split.insert(split.begin() + d + 1, step);
  r = r.reshape(split);
  return r.narrow(d + 1, 0, 1).squeeze(d + 1);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  if (dim() == 0) throw IndexError("narrow() cannot be applied to a 0-dim tensor");
  d = wrap_dim(d, dim());
  int64_t n = sizes()[d];
  if (start < 0) start += n;
  if (start < 0 || length < 0 || start + length > n)
    throw IndexError("narrow: start (" + std::to_string(start) + ") + length (" +
                     std::to_string(length) + ") exceeds dimension size (" + std::to_string(n) +
                     ")");
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  if (dim() == 0) throw IndexError("select() cannot be applied to a 0-dim tensor");
  d = wrap_dim(d, dim());
  int64_t n = sizes()[d];
  if (index < -n || index >= n)
    throw IndexError("select(): index " + std::to_string(index) +
                     " out of range for tensor of size " + list_str(sizes()) + " at dimension " +
                     std::to_string(d));
  if (index < 0) index += n;
  return narrow(d, index, 1).squeeze(d);
}

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  if (static_cast<int64_t>(indices.size()) > dim())
    throw IndexError("too many indices for tensor of dimension " + std::to_string(dim()));
  Tensor r = *this;
  int64_t d = 0;
  for (auto& ix : indices) {
    if (auto* i = std::get_if<int64_t>(&ix)) {
      r = r.select(d, *i);
    } else {
      auto& s = std::get<Slice>(ix);
      r = r.slice(d, s.start, s.stop, s.step);
      d++;
    }
  }
  return r;
}

Tensor Tensor::flip(IntList dims) const {
  std::vector<int64_t> flags(dim(), 0);
  for (auto d : dims) {
    d = wrap_dim(d, dim());
    if (flags[d]) throw IndexError("flip: dim " + std::to_string(d) + " appears multiple times");
    flags[d] = 1;
  }
  if (dim() == 0 || std::all_of(flags.begin(), flags.end(), [](auto f) { return !f; }))
    return *this;
  return movement(*this, Op::FLIP, flags);
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t d) const {
  d = wrap_dim(d, dim());
  if (split_size <= 0)
    throw ValueError("split: split_size must be positive, got " + std::to_string(split_size));
  std::vector<Tensor> out;
  int64_t n = sizes()[d];
  for (int64_t s = 0; s < n || (n == 0 && out.empty()); s += split_size)
    out.push_back(narrow(d, s, std::min(split_size, n - s)));
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  if (chunks <= 0)
    throw ValueError("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  d = wrap_dim(d, dim());
  int64_t n = sizes()[d];
  if (n == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), *this);  // as libtorch
  return split(std::max<int64_t>(1, (n + chunks - 1) / chunks), d);
}

Tensor constant_pad_nd(const Tensor& t, IntList pad, const Scalar& value) {
  detail::check_scalar_fits(value, t.dtype(), "constant_pad_nd");
  if (pad.size() % 2 || static_cast<int64_t>(pad.size()) > 2 * t.dim())
    throw ValueError("pad: padding length " + std::to_string(pad.size()) +
                     " must be even and at most twice the number of dims (" +
                     std::to_string(t.dim()) + ")");
  std::vector<int64_t> p(2 * t.dim(), 0), crop;
  bool any_pad = false, any_crop = false;
  for (size_t i = 0; i < pad.size() / 2; i++) {
    int64_t d = t.dim() - 1 - static_cast<int64_t>(i);
    p[2 * d] = pad[2 * i];
    p[2 * d + 1] = pad[2 * i + 1];
  }
  // Negative amounts crop first (shrink), positive ones pad.
  Tensor r = t;
  std::vector<int64_t> b;
  for (int64_t d = 0; d < t.dim(); d++) {
    int64_t lo = std::max<int64_t>(0, -p[2 * d]),
            hi = t.sizes()[d] - std::max<int64_t>(0, -p[2 * d + 1]);
    if (hi < lo) throw ValueError("pad: cropping more than the size of dim " + std::to_string(d));
    b.push_back(lo);
    b.push_back(hi);
    any_crop |= lo != 0 || hi != t.sizes()[d];
    p[2 * d] = std::max<int64_t>(0, p[2 * d]);
    p[2 * d + 1] = std::max<int64_t>(0, p[2 * d + 1]);
    any_pad |= p[2 * d] || p[2 * d + 1];
  }
  if (any_crop) r = movement(r, Op::SHRINK, b);
  if (!any_pad) return r;
  Tensor padded = movement(r, Op::PAD, p);
  // PAD fills with zeros: enough for a zero value, but -0.0 pads with -0.0 (as libtorch).
  const bool zero = value.kind() == kFloat64
                        ? value.to_double() == 0 && !std::signbit(value.to_double())
                        : value.to_int() == 0;
  if (zero) return padded;
  Tensor inside = movement(ones(r.sizes(), kBool), Op::PAD, p);
  return where(inside, padded, full_like(padded, value));
}
Tensor pad(const Tensor& t, IntList p, const Scalar& value) { return constant_pad_nd(t, p, value); }

Tensor cat(const std::vector<Tensor>& ts, int64_t d) {
  if (ts.empty()) throw ValueError("cat: expected a non-empty list of tensors");
  const Tensor& first = ts[0];
  if (first.dim() == 0) throw ShapeError("cat: zero-dimensional tensor cannot be concatenated");
  d = wrap_dim(d, first.dim());
  ScalarType t = first.dtype();
  int64_t total = 0;
  for (auto& x : ts) {
    if (x.dim() != first.dim())
      throw ShapeError("cat: tensors must have the same number of dims, got " +
                       list_str(first.sizes()) + " and " + list_str(x.sizes()));
    for (int64_t i = 0; i < x.dim(); i++)
      if (i != d && x.sizes()[i] != first.sizes()[i])
        throw ShapeError("cat: sizes of tensors must match except in dimension " +
                         std::to_string(d) + ", got " + list_str(first.sizes()) + " and " +
                         list_str(x.sizes()));
    t = promote_types(t, x.dtype());
    total += x.sizes()[d];
  }
  if (ts.size() == 1) return first.to(t);
  // Each piece padded to the full size at its offset; the sum of the pieces is one fused kernel.
  Tensor out;
  int64_t off = 0;
  for (auto& x : ts) {
    std::vector<int64_t> p(2 * x.dim(), 0);
    p[2 * d] = off;
    p[2 * d + 1] = total - off - x.sizes()[d];
    off += x.sizes()[d];
    Tensor piece = movement(x.to(t), Op::PAD, p);
    out = out.defined() ? out + piece : piece;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t d) {
  if (ts.empty()) throw ValueError("stack: expected a non-empty list of tensors");
  d = wrap_dim(d, ts[0].dim() + 1);
  std::vector<Tensor> u;
  for (auto& x : ts) {
    if (x.sizes() != ts[0].sizes())
      throw ShapeError("stack expects each tensor to be equal size, but got " +
                       list_str(ts[0].sizes()) + " and " + list_str(x.sizes()));
    u.push_back(x.unsqueeze(d));
  }
  return cat(u, d);
}

// gather's indexes must lie in [0, size) (libtorch rejects negative ones too). Read eagerly,
// except inside a jit capture, where reading data raises (see gather).
static void check_gather_index(const Tensor& index, int64_t dim, int64_t size) {
  if (jit_capturing() || index.numel() == 0) return;
  for (int64_t v : index.to_vector<int64_t>())
    if (v < 0 || v >= size)
      throw IndexError("gather(): index " + std::to_string(v) + " is out of bounds for dimension " +
                       std::to_string(dim) + " with size " + std::to_string(size));
}

Tensor Tensor::gather(int64_t d, const Tensor& index) const {
  d = wrap_dim(d, dim());
  if (index.dtype() != kInt64)
    throw DTypeError(std::string("gather(): Expected dtype int64 for index, got ") +
                     dtype_name(index.dtype()));
  if (index.dim() != dim())
    throw ShapeError("gather: index " + list_str(index.sizes()) + " and input " +
                     list_str(sizes()) + " must have the same number of dimensions");
  for (int64_t i = 0; i < dim(); i++)
    if (i != d && index.sizes()[i] > sizes()[i])
      throw ShapeError("gather: size of index " + list_str(index.sizes()) + " exceeds input " +
                       list_str(sizes()) + " at dimension " + std::to_string(i));
  check_gather_index(index, d, sizes()[d]);
  // Move `d` last, select by comparing against arange (a one-hot mask) and reduce over it.
  Tensor x = transpose(d, -1), ix = index.transpose(d, -1);
  std::vector<TensorIndex> sl;
  for (int64_t i = 0; i < dim() - 1; i++) sl.push_back(Slice(0, ix.sizes()[i]));
  x = x.index(sl);
  int64_t n = x.sizes().back();
  Tensor onehot = ix.unsqueeze(-1) == arange(n);
  Tensor picked = where(onehot, x.unsqueeze(-2), Scalar(0)).sum({-1}, false, dtype());
  // Inside a jit capture the index is not readable: an out-of-range index (no one-hot hit, so no
  // memory is read out of bounds) gives NaN in floating results on every replay.
  if (jit_capturing() && is_floating_point())
    picked = where((ix >= 0).logical_and(ix < n), picked,
                   full({}, std::numeric_limits<double>::quiet_NaN(), dtype()));
  return picked.transpose(d, -1);
}

}  // namespace ember
