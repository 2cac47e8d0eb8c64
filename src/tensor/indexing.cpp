// index_select, the scatters, embedding and one_hot as one-hot masks over the indexed dim
// (include/ember/indexing.h).
#include "ember/indexing.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ember/jit.h"
#include "ember/support/shape_str.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {

std::string str(const DimVector& s) { return support::shape_str(s); }

void check_index(const Tensor& index, int64_t size, const char* name) {
  if (index.dtype() != kInt64)
    throw DTypeError(std::string(name) + ": index must be int64, got " + dtype_name(index.dtype()));
  if (jit_capturing() || index.numel() == 0) return;
  for (int64_t v : index.to_vector<int64_t>())
    if (v < 0 || v >= size)
      throw IndexError(std::string(name) + ": index " + std::to_string(v) +
                       " is out of bounds for a dim of size " + std::to_string(size));
}

// The parts of a scatter, with `dim` moved last: hit [..., m, n] (index i names position p),
// src values [..., m, 1] cut to index's shape, and the result's other dims padded back to self's.
struct Scatter {
  Tensor self_t, hit, src;
  int64_t dim;
  IntList grow;  // (before, after) pairs from the last dim: index's dims up to self's
};

Scatter prepare(const Tensor& self, int64_t d_in, const Tensor& index, const Tensor& src,
                const char* name) {
  const int64_t dim = detail::wrap_dim(d_in, self.dim(), name);
  if (index.dim() != self.dim() || src.dim() != self.dim())
    throw ShapeError(std::string(name) + ": self " + str(self.sizes()) + ", index " +
                     str(index.sizes()) + " and src " + str(src.sizes()) +
                     " must have the same number of dims");
  for (int64_t d = 0; d < self.dim(); d++)
    if (index.size(d) > src.size(d) || (d != dim && index.size(d) > self.size(d)))
      throw ShapeError(std::string(name) + ": index " + str(index.sizes()) +
                       " is larger than src " + str(src.sizes()) + " or self " + str(self.sizes()) +
                       " at dim " + std::to_string(d));
  check_index(index, self.size(dim), name);
  Scatter s;
  s.dim = dim;
  std::vector<TensorIndex> cut;
  for (int64_t d = 0; d < src.dim(); d++) cut.push_back(Slice(0, index.size(d)));
  Tensor src_cut = src.index(cut).to(self.dtype()).transpose(dim, -1);
  Tensor ix = index.transpose(dim, -1);
  s.self_t = self.transpose(dim, -1);
  const int64_t n = s.self_t.size(-1);
  s.hit = ix.unsqueeze(-1) == arange(n);  // [..., m, n]
  s.src = src_cut.unsqueeze(-1);          // [..., m, 1]
  for (int64_t d = s.self_t.dim() - 2; d >= 0; d--) {
    s.grow.push_back(0);
    s.grow.push_back(s.self_t.size(d) - ix.size(d));
  }
  s.grow.insert(s.grow.begin(), {0, 0});  // the scattered dim itself is full size
  return s;
}

Tensor finish(const Scatter& s, const Tensor& out_t) { return out_t.transpose(s.dim, -1); }

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  if (index.dim() > 1)
    throw ShapeError("index_select: index must be 0-d or 1-d, got " + str(index.sizes()));
  const int64_t d = detail::wrap_dim(dim, self.dim(), "index_select");
  if (self.dim() == 0) return self.gather(0, index.reshape({-1})).reshape(index.sizes().vec());
  check_index(index, self.size(d), "index_select");
  const int64_t k = index.numel();
  Shape s(static_cast<size_t>(self.dim()), 1);
  s[d] = k;
  Shape full = self.shape();
  full[d] = k;
  return self.gather(d, index.reshape(s).expand(full));
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Scatter s = prepare(self, dim, index, src, "scatter");
  Tensor any = constant_pad_nd(s.hit.to(kInt64).sum({-2}) > 0, s.grow);
  Tensor value =
      constant_pad_nd(where(s.hit, s.src, Scalar(0)).sum({-2}, false, self.dtype()), s.grow);
  return finish(s, where(any, value, s.self_t));
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Scatter s = prepare(self, dim, index, src, "scatter_add");
  Tensor value =
      constant_pad_nd(where(s.hit, s.src, Scalar(0)).sum({-2}, false, self.dtype()), s.grow);
  return finish(s, s.self_t + value);
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce) {
  if (reduce == "sum") return scatter_add(self, dim, index, src);
  Scatter s = prepare(self, dim, index, src, "scatter_reduce");
  if (reduce == "prod") {
    Tensor f = where(s.hit, s.src, Scalar(1)).prod(-2);
    return finish(s, s.self_t * constant_pad_nd(f.to(self.dtype()), s.grow, 1));
  }
  if (reduce != "amax" && reduce != "amin")
    throw ValueError("scatter_reduce: reduce must be sum, prod, amax or amin, got '" + reduce +
                     "'");
  const bool mx = reduce == "amax";
  const double fill =
      mx ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  // An integer type's least (amax) or greatest (amin) value: its bits all 0 or 1 beyond the sign.
  const ScalarType t = self.dtype();
  const int bits = static_cast<int>(element_size(t) * 8) - (is_unsigned(t) ? 0 : 1);
  const int64_t top = bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1);
  Tensor base = self.is_floating_point() ? full({}, fill, t)
                : mx                     ? full({}, is_unsigned(t) ? 0 : -top - 1, kInt64).to(t)
                                         : full({}, top, kInt64).to(t);
  Tensor picked = where(s.hit, s.src, base);
  Tensor r = mx ? picked.amax({-2}) : picked.amin({-2});
  Tensor any = constant_pad_nd(s.hit.to(kInt64).sum({-2}) > 0, s.grow);
  r = constant_pad_nd(r, s.grow);
  Tensor combined = mx ? s.self_t.maximum(r) : s.self_t.minimum(r);
  return finish(s, where(any, combined, s.self_t));
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  if (weight.dim() != 2)
    throw ShapeError("embedding: weight must be 2-d [num_embeddings, embedding_dim], got " +
                     str(weight.sizes()));
  if (indices.dtype() != kInt64 && indices.dtype() != kInt32)
    throw DTypeError(std::string("embedding: indices must be int64 or int32, got ") +
                     dtype_name(indices.dtype()));
  Tensor w = weight;
  if (padding_idx >= 0 && padding_idx < weight.size(0))  // its row, detached: no gradient
    w = where(arange(weight.size(0)).unsqueeze(1) == padding_idx, weight.detach(), weight);
  Shape out = indices.shape();
  out.push_back(weight.size(1));
  return index_select(w, 0, indices.to(kInt64).reshape({-1})).reshape(out);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  if (self.dtype() != kInt64)
    throw DTypeError(std::string("one_hot: expected an int64 tensor, got ") +
                     dtype_name(self.dtype()));
  if (num_classes < -1)
    throw ValueError("one_hot: num_classes must be -1 or non-negative, got " +
                     std::to_string(num_classes));
  if (!jit_capturing()) {
    const auto v = self.to_vector<int64_t>();
    if (v.empty() && num_classes == -1)
      throw ValueError("one_hot: cannot infer the number of classes from an empty tensor");
    int64_t top = -1;
    for (int64_t x : v) {
      if (x < 0)
        throw ValueError("one_hot: class values must be non-negative, got " + std::to_string(x));
      top = std::max(top, x);
    }
    if (num_classes == -1) num_classes = top + 1;
    if (top >= num_classes)
      throw ValueError("one_hot: class value " + std::to_string(top) + " is not below " +
                       std::to_string(num_classes) + " classes");
  } else if (num_classes == -1) {
    throw ValueError("one_hot: num_classes must be given inside a jit capture");
  }
  return (self.unsqueeze(-1) == arange(num_classes)).to(kInt64);
}

}  // namespace ember
