// ember/tensor.h — the lazy Tensor. Every operation builds graph (src/ir); nothing runs until data
// is read or `realize()` is called, when the graph is scheduled into fused kernels, compiled and
// run.
//
// Names and semantics follow libtorch's C++ frontend (broadcasting, type promotion, dim/keepdim,
// negative dims) so that one generic test body runs on ember and on libtorch.
//
// Errors: ShapeError (shapes do not broadcast / reshape count mismatch / matmul inner dims),
// IndexError (dim or index out of range), DTypeError (dtype not accepted), ValueError (bad
// argument).
#pragma once
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "ember/device.h"
#include "ember/dim_vector.h"
#include "ember/dtype.h"
#include "ember/error.h"

namespace ember {

namespace ir {
struct Node;
class NodeRef;
}  // namespace ir
struct TensorImpl;

using Shape = std::vector<int64_t>;
using IntList = std::vector<int64_t>;
class Tensor;
/// Tensors with names, in order (a module's state dict, an optimizer's state, a checkpoint).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// A number given where a tensor is expected (a "wrapped number" in PyTorch's promotion rules:
/// it never widens a tensor's dtype within the same category). An integer scalar stays exact for
/// integer tensors at any int64 value (it never passes through a double). As in libtorch, an
/// operand of arithmetic or a comparison is converted to the operation's dtype as a cast would
/// convert it (int64 to int32 or uint8 wraps: uint8(200) < 300 compares with 44), while a fill
/// value (full, fill_, full_like), a clamp bound, a `where` or pad value and an `alpha` must fit
/// the dtype (ValueError otherwise: an integer outside its range, uint8 accepting -255..255 as
/// libtorch does; a non-finite or out-of-range float for an integer dtype; a finite float beyond
/// float32's range for float32).
class Scalar {
 public:
  Scalar(bool v) : kind_(kBool), i_(v), d_(v) {}
  Scalar(int v) : kind_(kInt64), i_(v), d_(v) {}
  Scalar(long v) : kind_(kInt64), i_(v), d_(static_cast<double>(v)) {}
  Scalar(long long v) : kind_(kInt64), i_(v), d_(static_cast<double>(v)) {}
  Scalar(float v) : kind_(kFloat64), i_(float_to_int64(v)), d_(v) {}
  Scalar(double v) : kind_(kFloat64), i_(float_to_int64(v)), d_(v) {}
  /// kBool, kInt64 or kFloat64: the category of the value.
  ScalarType kind() const { return kind_; }
  /// The value as a double (an int64 beyond 2^53 rounds).
  double to_double() const { return d_; }
  /// The value as an int64: exact for integer and bool scalars; a floating one converted by the
  /// float-to-integer rule of Tensor::to.
  int64_t to_int() const { return i_; }

 private:
  static int64_t float_to_int64(double v);
  ScalarType kind_;
  int64_t i_;
  double d_;
};

/// Creation options, as libtorch's TensorOptions (dtype and requires_grad; device is cpu).
struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions dtype(ScalarType t) const {
    auto o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }
  std::optional<ScalarType> dtype_;
  bool requires_grad_ = false;
};

/// A Python-style slice for `Tensor::index`; `None` bounds mean the ends of the dim.
struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        int64_t step = 1)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop;
  int64_t step;
};
/// One entry of `Tensor::index`: an integer (selects and drops the dim) or a Slice.
using TensorIndex = std::variant<int64_t, Slice>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  /// Rebinds this handle. Rebinding it away from a tensor that a jit capture read from outside
  /// the function is noted, and the next call of that jit captures again (jit.h).
  Tensor& operator=(const Tensor& o);
  Tensor& operator=(Tensor&& o) noexcept;

  // ---- metadata -------------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  /// The shape, held in the tensor's graph node (valid while this tensor holds that node: an
  /// in-place op or realize() may give it another; copy it to keep it).
  const DimVector& sizes() const;
  Shape shape() const { return sizes().vec(); }
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  ScalarType dtype() const;
  ScalarType scalar_type() const { return dtype(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  /// The graph node this tensor currently evaluates to.
  const ir::NodeRef& node() const;
  TensorImpl* impl() const { return impl_.get(); }
  /// True when both handles share one tensor (libtorch's is_same).
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // ---- evaluation and data (defined in the engine layer) ---------------------------------------
  /// Computes this tensor now (one schedule); afterwards it is backed by a buffer.
  const Tensor& realize() const;
  /// Reads the single element of a one-element tensor, converted to T.
  template <typename T>
  T item() const;
  /// All elements in row-major order, converted to T.
  template <typename T>
  std::vector<T> to_vector() const;
  /// The text operator<< prints.
  std::string toString() const;

  // ---- buffers (host access without the graph) -------------------------------------------------
  /// True when this tensor is a buffer of its own: realized, not a view of another tensor's
  /// buffer and without a pending in-place update (it then keeps that buffer across optimizer
  /// steps, in-place ops and checkpoint loads).
  bool is_realized() const;
  /// Identifies the buffer of a realized tensor: equal for tensors that share one, unchanged by
  /// in-place updates; null when !is_realized().
  const void* storage_id() const;
  /// The first byte of a realized tensor's buffer (row-major elements of dtype()). Throws
  /// ValueError when !is_realized(). Write through it only inside ember::overwrite_in_place.
  void* data_ptr() const;

  // ---- copies and casts ------------------------------------------------------------------------
  Tensor contiguous() const;
  Tensor clone() const;
  /// A cast to dtype t. Floats to integers truncate toward zero; NaN becomes 0, and values beyond
  /// the integer type's range become its minimum or maximum (saturation: C leaves these cases
  /// undefined, and libtorch's results vary by CPU); to uint8, int8, int16, uint16 and uint32 a
  /// float goes through int64 by that rule and then wraps modulo 2^bits, as libtorch converts
  /// uint8 (-1.0 -> 255); to uint64 it truncates within [0, 2^64), saturates above and wraps
  /// below through int64 (-1.0 -> 2^64 - 1). Integers to narrower integers wrap modulo 2^bits;
  /// anything to bool is x != 0 (NaN -> true); to a float rounds to nearest even (to float16 and
  /// bfloat16 through float32, as libtorch converts: a float64 or an int64 may round twice).
  /// Every device and every host-side conversion (item, to_vector, fill values) gives the same
  /// result.
  Tensor to(ScalarType t) const;
  /// This tensor's value in the memory of `device` (device.h), as libtorch's Tensor::to(Device):
  /// *this when it is there already, else a realized copy there (the engine's launch list copies
  /// it: RuntimeStats::copies_to_device / copies_to_host). Ops on tensors that live on a device
  /// run there and their results stay there; reading data (item, to_vector) copies it back.
  /// Gradients flow through it: the backward of to(device) is a to() back. Throws ValueError for
  /// a device that is unknown or not built (device.h, runtime::get_device).
  Tensor to(const Device& device) const;
  /// Where the data lives: the device of the buffers this tensor's value reads ("cpu" for host
  /// memory and for a value that reads none). Throws ValueError when it reads two memories.
  Device device() const;
  Tensor detach() const;

  // ---- elementwise ----------------------------------------------------------------------------
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  /// x where x > 0 or NaN, else +0, except relu(-0) = -0; gradient 1 where x > 0 or NaN, 0
  /// elsewhere (libtorch's signs and gradient).
  Tensor relu() const;
  /// |x|, with abs(-0) = +0; gradient sign(x), 0 at 0 and at NaN (as libtorch).
  Tensor abs() const;
  Tensor sign() const;
  Tensor square() const;
  Tensor reciprocal() const;
  /// Largest whole number <= x, elementwise (torch.floor); the identity on integer tensors.
  /// Its gradient is 0.
  Tensor floor() const;
  Tensor pow(const Tensor& e) const;
  Tensor pow(const Scalar& e) const;
  /// Elementwise max / min with promotion. NaN on either side gives NaN; a tie, +0 against -0
  /// included, gives this tensor's value (libtorch's scalar loop, std::max / std::min, does the
  /// same; its vectorised loop gives the other operand's zero for tensors of 8-16 elements and
  /// more, so libtorch has no one answer there). Gradient as torch.maximum: all of it to the
  /// larger side, half to each on a tie, all of it to both where either is NaN.
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  /// min(max(x, min), max) as libtorch: NaN in x or in a bound gives NaN, max wins when min > max,
  /// and x is returned as it is where min <= x <= max (clamp(-0, 0) = -0). Gradient 1 where
  /// min <= x <= max, else 0 (also at NaN). Bounds must fit the result dtype (ValueError).
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor clamp_min(const Scalar& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(const Scalar& max) const { return clamp(std::nullopt, max); }
  /// libtorch's masked_fill: value where mask is true, this elsewhere; mask (bool, DTypeError
  /// otherwise) and this broadcast together; the result keeps this dtype, which value must fit
  /// (ValueError). Gradient: this's where mask is false, 0 where it is true.
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  /// this + alpha * o. alpha must be a bool only for bool results, an integer for integer
  /// results (DTypeError otherwise, as libtorch), and fit the result dtype (ValueError).
  /// Subtraction with a bool operand is a DTypeError (as PyTorch: use logical_xor/logical_not).
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  /// True division: integer operands give the default float dtype.
  Tensor div(const Tensor& o) const;
  Tensor add(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Scalar& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;

  // ---- reductions (dims may be negative; an empty dim list reduces every dim) -------------------
  /// Floating sums are accumulated blocked and pairwise in the reduce's own dtype (as numpy's and
  /// PyTorch's): on `cpu` each of the kernel's U <= 16 interleaved accumulators adds blocks of at
  /// most 256 terms in order and combines the block partials pairwise; `interp` sums pairwise down
  /// to runs of 8. For n terms x_i the error of the result s^ is bounded, to first order, by
  ///   |s^ - sum x_i| <= (256 + ceil(log2 n) + U) * u * sum |x_i|    (cpu)
  ///   |s^ - sum x_i| <= (8 + ceil(log2 n)) * u * sum |x_i|          (interp)
  /// with u = 2^-24 for float32 and 2^-53 for float64 (1e8 float32 terms: about 2e-5 of
  /// sum |x_i| at worst; measured errors are far smaller, see tests/core/test_numerics.cpp). A
  /// running float sum's bound grows as n u instead. mean, var and std inherit the bound. Matrix
  /// products (the register-tiled kernels) sum blocks of at most 256 products along k and add the
  /// block partials in order: |c^ - c| <= (256 + ceil(k / 256)) * u * sum_k |a_ik b_kj|.
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntList dims, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor mean(IntList dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  /// Largest element (all dims).
  Tensor max() const;
  Tensor min() const;
  /// (values, indices) along dim, as libtorch; indices are the first occurrence, int64.
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntList dims, bool keepdim = false) const;
  Tensor amin(IntList dims, bool keepdim = false) const;
  /// Variance with Bessel's correction when unbiased (PyTorch's default). The all-dims
  /// `var(unbiased)` / `std(unbiased)` accept only a bool, so a dim list such as `var({1})` always
  /// selects the dims overload (a plain `bool` parameter would win it by standard conversion).
  Tensor var() const;
  template <std::same_as<bool> B>
  Tensor var(B unbiased) const {
    return var(IntList{}, unbiased, false);
  }
  Tensor var(IntList dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std() const;
  template <std::same_as<bool> B>
  Tensor std(B unbiased) const {
    return std(IntList{}, unbiased, false);
  }
  Tensor std(IntList dims, bool unbiased = true, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(IntList dims, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // ---- movement: views, never copies -----------------------------------------------------------
  /// One dim may be -1 (inferred). Throws ShapeError when element counts differ.
  Tensor reshape(IntList shape) const;
  Tensor view(IntList shape) const { return reshape(std::move(shape)); }
  Tensor permute(IntList dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  /// Transpose of a tensor of at most 2 dims.
  Tensor t() const;
  /// -1 keeps a dim; new leading dims may be added.
  Tensor expand(IntList shape) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
               int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor index(const std::vector<TensorIndex>& indices) const;
  Tensor flip(IntList dims) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  /// out[i][j] = self[i][index[i][j]] (dim 1), as torch.gather; index is int64.
  Tensor gather(int64_t dim, const Tensor& index) const;

  // ---- linear algebra --------------------------------------------------------------------------
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;

  // ---- in-place (write into this tensor's buffer on realize; shape and dtype are kept) ---------
  // Value semantics: other tensors built from this one before the update (computed values,
  // views and detach() alike) keep the old values whenever they are realized; the engine copies
  // the old data for them only while one is alive (RuntimeStats::buffers_preserved).
  // The arithmetic ones (add_, sub_, mul_, div_ and the operators +=, -=, *=, /=) compute the
  // out-of-place result's dtype and write it only when it can be cast into this tensor's dtype
  // as PyTorch allows (its canCast): not a float result into an integer or bool tensor, not a
  // non-bool result into a bool tensor (DTypeError "add_: result type float32 can't be cast to
  // the desired output type int64"). A result of the same or a lower category is converted by
  // the cast rule (to): uint8 wraps, float64 into float32 rounds. copy_ and fill_ convert any
  // dtype (copy_ truncates floats into integers).
  Tensor& copy_(const Tensor& src);
  Tensor& zero_();
  Tensor& fill_(const Scalar& v);
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& o, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(const Scalar& o);
  Tensor& div_(const Tensor& o);
  Tensor& div_(const Scalar& o);
  /// libtorch's set_data: this tensor (every handle to it) now holds `new_data`'s value, shape
  /// and dtype, in new_data's buffer (realized first when it is not one), keeping requires_grad
  /// and its gradient; what it held before, and updates pending on it, are dropped. For
  /// conversions such as nn::Module::to. ValueError for an undefined tensor; DTypeError when this
  /// tensor requires grad and new_data is not floating.
  Tensor& set_data(const Tensor& new_data);

  // ---- autograd (src/tensor/autograd) ----------------------------------------------------------
  bool requires_grad() const;
  Tensor& set_requires_grad(bool r);
  Tensor& requires_grad_(bool r = true) { return set_requires_grad(r); }
  /// Accumulated gradient (undefined until a backward pass reaches this tensor).
  Tensor grad() const;
  Tensor& mutable_grad();
  void set_grad(const Tensor& g);
  /// Gradients of this (scalar unless `gradient` is given) w.r.t. every tensor that requires grad.
  void backward(const Tensor& gradient = Tensor()) const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// ---- operators ----------------------------------------------------------------------------------
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
/// Prints the values as PyTorch does: "tensor([[1, 2],\n        [3, 4]], dtype=int32)": one row
/// per line, integers exact, floats in one format for the whole tensor (four decimals, "3." for
/// integral values, scientific for magnitudes of 1e8 and more, below 1e-4, or spanning more than
/// three decades); beyond 1,000 elements the first and last 3 of every dim around "...". The
/// dtype is named unless it is float32, int64 or bool; requires_grad=True is shown. Realizes.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- free functions (torch:: names) ------------------------------------------------------------
Tensor empty(IntList shape, TensorOptions o = {});
Tensor zeros(IntList shape, TensorOptions o = {});
Tensor ones(IntList shape, TensorOptions o = {});
Tensor full(IntList shape, const Scalar& value, TensorOptions o = {});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, const Scalar& value);
/// A 0-d tensor holding v; float32 unless a dtype is given, whatever the value's kind (as
/// torch::scalar_tensor; `full({}, v)` infers int64 / bool from the value).
Tensor scalar_tensor(const Scalar& v, TensorOptions o = {});
/// [start, end) with step; int64 unless any bound is floating or a dtype is given.
Tensor arange(const Scalar& end, TensorOptions o = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions o = {});
Tensor eye(int64_t n, TensorOptions o = {});
Tensor eye(int64_t n, int64_t m, TensorOptions o = {});
/// Copies `numel(shape)` elements of dtype from data.
Tensor from_blob(const void* data, IntList shape, ScalarType dtype);
/// A realized tensor over `numel(shape)` row-major elements of dtype at data, without a copy (as
/// libtorch's from_blob with a deleter): ember reads and, through in-place ops, writes that
/// memory, and calls deleter(data) once when the last tensor using it dies (possibly on another
/// thread). The caller keeps the memory valid until then. Writes made to it by others are seen by
/// lazy results realized afterwards (the buffer's version is not bumped). ValueError when data is
/// null or not aligned to the element size; an empty shape's tensor is a copy (deleter called at
/// once).
Tensor from_blob(void* data, IntList shape, ScalarType dtype, std::function<void(void*)> deleter);
/// Copies values; shape defaults to {values.size()}.
template <typename T>
Tensor from_vector(const std::vector<T>& values, std::optional<IntList> shape = std::nullopt);
/// Like libtorch's torch::tensor({...}) for 1-d float data.
Tensor tensor(std::initializer_list<float> values);

/// Seeds the global counter-based generator: results depend only on the seed and the order of
/// random calls, never on thread count or device.
void manual_seed(uint64_t seed);
/// While alive, random draws on the calling thread (rand, randn, randint, the nn::init
/// initialisers) come from a private generator seeded with `seed`; the global one is neither read
/// nor advanced, so draws made for throwaway tensors on one thread (a scratch model,
/// rl::PpoLearner::compile_ahead) cannot change a seeded run's draws on another.
class ScopedGenerator {
 public:
  explicit ScopedGenerator(uint64_t seed);
  ~ScopedGenerator();
  ScopedGenerator(const ScopedGenerator&) = delete;
  ScopedGenerator& operator=(const ScopedGenerator&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
  void* previous_;
};
/// Uniform in [0, 1): k random bits of one 64-bit counter-based draw per element scaled by 2^-k,
/// k = 24 for float32 and 53 for float64 (every multiple of 2^-k in [0, 1) equally likely).
Tensor rand(IntList shape, TensorOptions o = {});
/// Standard normal (Box–Muller on two uniforms).
Tensor randn(IntList shape, TensorOptions o = {});
/// Integers uniform in [low, high), int64 by default: every integer of the range equally likely
/// for any low < high (up to [INT64_MIN, INT64_MAX)), from 64-bit draws reduced without bias by
/// Lemire's multiply-and-reject ("Fast random integer generation in an interval", 2019). An
/// integer dtype must hold low and high - 1 (ValueError otherwise, as libtorch); a floating one
/// gets the int64 draws converted.
Tensor randint(int64_t low, int64_t high, IntList shape, TensorOptions o = {});

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Scalar& b);
Tensor matmul(const Tensor& a, const Tensor& b);
/// input @ weight^T + bias (libtorch's torch::nn::functional::linear): input [..., in], weight
/// [out, in], bias [out] or undefined (no bias); result [..., out]. ShapeError when the sizes do
/// not pair.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor cat(const std::vector<Tensor>& ts, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim = 0);
/// Constant padding; `pad` lists (before, after) pairs starting from the LAST dim (PyTorch's
/// F.pad / constant_pad_nd convention). Negative amounts crop.
Tensor constant_pad_nd(const Tensor& t, IntList pad, const Scalar& value = 0);
Tensor pad(const Tensor& t, IntList pad, const Scalar& value = 0);
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);
Tensor exp(const Tensor& t);
Tensor log(const Tensor& t);
Tensor tanh(const Tensor& t);
Tensor sqrt(const Tensor& t);
Tensor abs(const Tensor& t);
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max);

/// Realizes several tensors in one schedule (shared subgraphs are computed once).
void realize(const std::vector<Tensor>& ts);

/// Writes into realized tensors' buffers from host code (checkpoint loads, an optimizer's learning
/// rate) with the value semantics of an in-place op: lazy values that read the current data keep
/// a copy, `write` runs (it writes through data_ptr()), and every tensor keeps its buffer, so a
/// jit replay bound to it reads the new values. Throws ValueError when a tensor is not a realized
/// buffer (a view or a pending update).
void overwrite_in_place(const std::vector<Tensor>& ts, const std::function<void()>& write);

/// Result dtype of a binary op under PyTorch's promotion (dimensioned tensors > 0-d tensors >
/// wrapped scalars, each only when of a higher category).
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);

}  // namespace ember
