// Indexing: Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND, OneHot; and
// the ops whose output shape depends on values, read on the host: NonZero, Compress,
// ReverseSequence. ONNX indices may be negative (counted from the end) and int32 or int64.
#include <cmath>
#include <limits>

#include "common.h"
#include "ember/indexing.h"
#include "ember/jit.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
namespace {

// Indices as int64 in [0, n): negative ones wrap once; IndexError for the rest.
Tensor wrap_indices(const Tensor& idx, int64_t n) {
  if (idx.is_floating_point() || idx.dtype() == kBool)
    throw DTypeError(std::string("indices must be integers, got ") + dtype_name(idx.dtype()));
  Tensor i = idx.to(kInt64);
  // Read eagerly, except inside an ember::jit capture, where index_select and gather defer too.
  if (i.numel() && !jit_capturing())
    for (int64_t v : i.to_vector<int64_t>())
      if (v < -n || v >= n)
        throw IndexError("index " + std::to_string(v) + " is out of range for a dim of size " +
                         std::to_string(n));
  return where(i < 0, i + n, i);
}

// True when the model constant t holds floats that are all finite (read on the host).
bool finite_constant(const OpContext& c, size_t input) {
  const Tensor& t = c.in(input);
  if (!c.is_constant(input) || (t.dtype() != kFloat32 && t.dtype() != kFloat64)) return false;
  for (double v : t.to_vector<double>())
    if (!std::isfinite(v)) return false;
  return true;
}

// Rows of a constant table x [n, ...] picked by indices i (int64 in [0, n), 1-d) as the product of
// i's one-hot rows [k, n] with x [n, R]: exact for a finite table (each output is 1 * w plus
// zeros), and it runs as a matmul plan, where Tensor::gather's one-hot reduction reads x's rows
// strided (an embedding lookup took 50 times the product's time).
Tensor rows_by_product(const Tensor& x, const Tensor& i) {
  const int64_t n = x.size(0);
  Tensor hot = (i.unsqueeze(-1) == arange(n)).to(x.dtype());
  Tensor picked = hot.matmul(x.reshape({n, -1}));
  // Inside a jit capture the indices are not checked on the host: an out-of-range one (no one-hot
  // hit) gives NaN, as Tensor::gather does.
  if (jit_capturing())
    picked = where(((i >= 0).logical_and(i < n)).unsqueeze(-1), picked,
                   full({}, std::numeric_limits<double>::quiet_NaN(), x.dtype()));
  Shape out = {i.size(0)};
  out.insert(out.end(), x.sizes().begin() + 1, x.sizes().end());
  return picked.reshape(out);
}

}  // namespace

// wrap_indices of constant indices, wrapped on the host (no kernel; static data in a capture).
Tensor wrap_constant_indices(const Tensor& idx, int64_t n) {
  std::vector<int64_t> v = idx.to_vector<int64_t>();
  for (int64_t& i : v) {
    if (i < -n || i >= n)
      throw IndexError("index " + std::to_string(i) + " is out of range for a dim of size " +
                       std::to_string(n));
    if (i < 0) i += n;
  }
  return from_vector(v, idx.sizes());
}

std::vector<Tensor> gather(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 0), x.dim());
  const ScalarType it = c.in(1).dtype();
  Tensor i = c.is_constant(1) && c.in(1).numel() <= 64 && (it == kInt64 || it == kInt32)
                 ? wrap_constant_indices(c.in(1), x.size(a))
                 : wrap_indices(c.in(1), x.size(a));
  if (a == 0 && x.dim() >= 1 && x.numel() > 0 && finite_constant(c, 0)) {
    Shape out = i.shape();
    out.insert(out.end(), x.sizes().begin() + 1, x.sizes().end());
    return one(rows_by_product(x, i.reshape({-1})).reshape(out));
  }
  Shape out(x.sizes().begin(), x.sizes().begin() + a);
  out.insert(out.end(), i.sizes().begin(), i.sizes().end());
  out.insert(out.end(), x.sizes().begin() + a + 1, x.sizes().end());
  return one(index_select(x, a, i.reshape({-1})).reshape(out));
}

std::vector<Tensor> gather_elements(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 0), x.dim());
  return one(x.gather(a, wrap_indices(c.in(1), x.size(a))));
}

namespace {

// The flat position in dims [b, b + k) of data (k = indices.size(-1)) of each index row.
Tensor linear_index(const Tensor& data, const Tensor& idx, int64_t b) {
  const int64_t k = idx.size(-1);
  if (k > data.dim() - b)
    throw ShapeError("index rows of " + std::to_string(k) + " entries exceed the data's rank");
  Tensor lin = zeros(Shape(idx.sizes().begin(), idx.sizes().end() - 1), kInt64);
  for (int64_t j = 0; j < k; j++) {
    const int64_t n = data.size(b + j);
    lin = lin * n + wrap_indices(idx.select(-1, j), n);
  }
  return lin;
}

}  // namespace

// GatherND with batch_dims b: out[batch, i...] = data[batch, idx[batch, i..., :], ...].
std::vector<Tensor> gather_nd(OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& idx = c.in(1);
  const int64_t b = c.attr_int("batch_dims", 0), k = idx.size(-1);
  int64_t B = 1, K = 1;
  for (int64_t i = 0; i < b; i++) B *= x.size(i);
  for (int64_t i = b; i < b + k; i++) K *= x.size(i);
  Shape rest(x.sizes().begin() + b + k, x.sizes().end());
  Shape data = {B * K};
  data.insert(data.end(), rest.begin(), rest.end());
  Tensor lin = linear_index(x, idx, b).reshape({B, -1});  // [B, M]
  Tensor flat = lin + (arange(B) * K).unsqueeze(-1);      // into [B * K]
  Tensor picked = index_select(x.reshape(data), 0, flat.reshape({-1}));
  Shape out(idx.sizes().begin(), idx.sizes().end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return one(picked.reshape(out));
}

namespace {

Tensor scatter_with(const std::string& reduction, const Tensor& x, int64_t a, const Tensor& i,
                    const Tensor& u) {
  if (reduction == "none") return scatter(x, a, i, u);
  if (reduction == "add") return scatter_add(x, a, i, u);
  if (reduction == "mul") return scatter_reduce(x, a, i, u, "prod");
  throw UnsupportedError("reduction '" + reduction + "' is not supported");
}

}  // namespace

std::vector<Tensor> scatter_elements(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 0), x.dim());
  const std::string r = c.attr_string("reduction", "none");
  return one(scatter_with(r, x, a, wrap_indices(c.in(1), x.size(a)), c.in(2)));
}

// ScatterND: data[idx[i, :], ...] = updates[i, ...], as a scatter into the data flattened over
// the indexed dims.
std::vector<Tensor> scatter_nd(OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& idx = c.in(1);
  const int64_t k = idx.size(-1);
  int64_t K = 1;
  for (int64_t i = 0; i < k; i++) K *= x.size(i);
  Shape rest(x.sizes().begin() + k, x.sizes().end());
  int64_t R = 1;
  for (auto d : rest) R *= d;
  Tensor lin = linear_index(x, idx, 0).reshape({-1, 1});  // [M, 1]
  const int64_t M = lin.size(0);
  Tensor upd = c.in(2).reshape({M, R});
  Tensor flat = x.reshape({K, R});
  Tensor r = scatter_with(c.attr_string("reduction", "none"), flat, 0, lin.expand({M, R}), upd);
  return one(r.reshape(x.sizes().vec()));
}

std::vector<Tensor> one_hot(OpContext& c) {
  const Tensor& idx = c.in(0);
  const int64_t depth = static_cast<int64_t>(c.floats_of(1).at(0));
  const Tensor& values = c.in(2);
  const int64_t a = axis(c.attr_int("axis", -1), idx.dim() + 1);
  Tensor i = idx.to(kFloat64).floor().to(kInt64);
  i = where(i < 0, i + depth, i);
  Shape s(static_cast<size_t>(idx.dim() + 1), 1);
  s[a] = depth;
  Tensor hit = i.unsqueeze(a) == arange(depth).reshape(s);
  return one(where(hit, values.select(0, 1), values.select(0, 0)));
}

std::vector<Tensor> non_zero(OpContext& c) {
  const Tensor& x = c.in(0);
  const auto v = x.ne(0).to(kInt64).to_vector<int64_t>();
  const Shape s = x.dim() ? x.shape() : Shape{1};
  std::vector<std::vector<int64_t>> rows(s.size());
  for (int64_t lin = 0; lin < static_cast<int64_t>(v.size()); lin++) {
    if (!v[lin]) continue;
    int64_t r = lin;
    for (size_t d = s.size(); d-- > 0;) {
      rows[d].push_back(r % s[d]);
      r /= s[d];
    }
  }
  const int64_t n = rows.empty() ? 0 : static_cast<int64_t>(rows[0].size());
  std::vector<int64_t> flat;
  for (auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return one(from_vector(flat, Shape{x.dim() ? x.dim() : 1, n}).reshape({x.dim(), n}));
}

std::vector<Tensor> compress(OpContext& c) {
  Tensor x = c.in(0);
  const auto cond = c.ints_of(1);
  int64_t a = 0;
  if (c.has_attr("axis"))
    a = axis(c.attr_int("axis"), x.dim());
  else
    x = x.reshape({-1});
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < static_cast<int64_t>(cond.size()) && i < x.size(a); i++)
    if (cond[i]) keep.push_back(i);
  return one(index_select(x, a, from_vector(keep, Shape{static_cast<int64_t>(keep.size())})));
}

// ReverseSequence: the first seq_len[b] steps of each batch entry reversed along time_axis.
std::vector<Tensor> reverse_sequence(OpContext& c) {
  const Tensor& x = c.in(0);
  const auto lens = c.ints_of(1);
  const int64_t ta = c.attr_int("time_axis", 0), ba = c.attr_int("batch_axis", 1);
  const int64_t T = x.size(ta), B = x.size(ba);
  if (static_cast<int64_t>(lens.size()) != B)
    throw ShapeError("sequence_lens must have one entry per batch entry");
  std::vector<int64_t> src(static_cast<size_t>(T * B));  // [T, B] source time of each output step
  for (int64_t t = 0; t < T; t++)
    for (int64_t b = 0; b < B; b++) src[t * B + b] = t < lens[b] ? lens[b] - 1 - t : t;
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[ta] = T, s[ba] = B;
  Tensor idx = from_vector(src, Shape{T, B});
  if (ta > ba) idx = idx.t();
  return one(x.gather(ta, idx.reshape(s).expand(x.sizes().vec())));
}

}  // namespace ember::onnx::ops
