// Creation: constants (lazy, broadcast views of one CONST), host-filled buffers (arange, eye, data
// copied in), and the counter-based random ops.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "ember/host_values.h"
#include "ember/support/kernel_scalar.h"
#include "engine/buffer_table.h"
#include "tensor/host_element.h"
#include "tensor/jit_static.h"
#include "tensor/tensor_impl.h"

namespace ember {

using detail::make_tensor;
using detail::node_of;
using ir::NodeRef;
using ir::Op;

namespace {

void check_shape(const IntList& shape, const char* name) {
  for (auto d : shape)
    if (d < 0)
      throw ValueError(std::string(name) + ": negative dimension " + std::to_string(d) +
                       " in shape " + ir::shape_str(shape));
}

Tensor with_grad(Tensor t, const TensorOptions& o) {
  if (o.requires_grad_) t.set_requires_grad(true);
  return t;
}

template <typename T>
void fill_range(void* dst, double start, double step, int64_t n) {
  T* p = static_cast<T*>(dst);
  for (int64_t i = 0; i < n; i++) p[i] = static_cast<T>(start + step * static_cast<double>(i));
}

// start + i * step in int64 (wrapping, computed unsigned), converted to T as a cast wraps.
template <typename T>
void fill_int_range(void* dst, int64_t start, int64_t step, int64_t n) {
  T* p = static_cast<T*>(dst);
  for (int64_t i = 0; i < n; i++)
    p[i] = static_cast<T>(static_cast<int64_t>(
        static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step)));
}

// A buffer filled on the host from sizes and scalars only (arange, eye, a constant made
// concrete): static for ember::jit (a replay with the same input signature makes the same).
Tensor constant_tensor(const engine::StorageRef& storage, IntList shape) {
  ir::NodeRef n = engine::make_buffer(storage, shape);
  engine::set_static(*n);
  return make_tensor(std::move(n));
}

void fill_from_doubles(void* dst, ScalarType t, const std::vector<double>& v) {
  // Integers by the float-to-integer rule (Tensor::to).
  for (size_t i = 0; i < v.size(); i++) detail::store_double(dst, t, static_cast<int64_t>(i), v[i]);
}

// Global generator state: the seed and a counter that advances by the numel of every draw.
struct Generator {
  std::mutex mu;
  uint64_t seed = 0x853c49e6748fea9bULL;
  uint64_t counter = 0;
};
// A ScopedGenerator's on this thread, else null.
thread_local Generator* t_scoped = nullptr;

Generator& generator() {
  if (t_scoped) return *t_scoped;
  static Generator g;
  return g;
}

}  // namespace

Tensor from_blob(const void* data, IntList shape, ScalarType dtype) {
  check_shape(shape, "from_blob");
  const bool fixed = detail::in_static_scope();  // ember::StaticData: a capture may take it in
  if (auto* o = detail::access_observer(); o && !fixed) o->host_data();
  auto st = std::make_shared<runtime::Storage>(dtype, ir::shape_numel(shape));
  if (st->nbytes()) std::memcpy(st->data(), data, st->nbytes());
  Tensor t = make_tensor(engine::make_buffer(st, shape));
  if (fixed) detail::set_static_buffer(t);
  return t;
}

Tensor from_blob(void* data, IntList shape, ScalarType dtype, std::function<void(void*)> deleter) {
  check_shape(shape, "from_blob");
  if (!deleter) throw ValueError("from_blob: the deleter is empty");
  // The deleter runs exactly once from here on, whatever is thrown below.
  std::shared_ptr<void> owner(data, std::move(deleter));
  if (!data) throw ValueError("from_blob: data is null");
  if (reinterpret_cast<uintptr_t>(data) % element_size(dtype) != 0)
    throw ValueError("from_blob: data is not aligned to its " +
                     std::to_string(element_size(dtype)) + "-byte elements (" + dtype_name(dtype) +
                     ")");
  const int64_t numel = ir::shape_numel(shape);
  if (numel == 0) return from_blob(static_cast<const void*>(data), std::move(shape), dtype);
  const bool fixed = detail::in_static_scope();  // as the copying from_blob above
  if (auto* o = detail::access_observer(); o && !fixed) o->host_data();
  auto st = std::make_shared<runtime::Storage>(dtype, numel, data, std::move(owner));
  Tensor t = make_tensor(engine::make_buffer(st, shape));
  if (fixed) detail::set_static_buffer(t);
  return t;
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, std::optional<IntList> shape) {
  IntList s = shape ? *shape : IntList{static_cast<int64_t>(values.size())};
  if (ir::shape_numel(s) != static_cast<int64_t>(values.size()))
    throw ShapeError("from_vector: " + std::to_string(values.size()) +
                     " values do not fill shape " + ir::shape_str(s));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(values.begin(), values.end());
    return from_blob(b.data(), s, kBool);
  } else {
    return from_blob(values.data(), s, dtype_of<T>());
  }
}
template Tensor from_vector<float>(const std::vector<float>&, std::optional<IntList>);
template Tensor from_vector<double>(const std::vector<double>&, std::optional<IntList>);
template Tensor from_vector<int32_t>(const std::vector<int32_t>&, std::optional<IntList>);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, std::optional<IntList>);
template Tensor from_vector<uint8_t>(const std::vector<uint8_t>&, std::optional<IntList>);
template Tensor from_vector<bool>(const std::vector<bool>&, std::optional<IntList>);
template Tensor from_vector<int8_t>(const std::vector<int8_t>&, std::optional<IntList>);
template Tensor from_vector<int16_t>(const std::vector<int16_t>&, std::optional<IntList>);
template Tensor from_vector<uint16_t>(const std::vector<uint16_t>&, std::optional<IntList>);
template Tensor from_vector<uint32_t>(const std::vector<uint32_t>&, std::optional<IntList>);
template Tensor from_vector<uint64_t>(const std::vector<uint64_t>&, std::optional<IntList>);

Tensor tensor(std::initializer_list<float> values) {
  return from_vector(std::vector<float>(values));
}

Tensor full(IntList shape, const Scalar& value, TensorOptions o) {
  check_shape(shape, "full");
  ScalarType t = o.dtype_.value_or(detail::scalar_default_dtype(value));
  return with_grad(make_tensor(detail::checked_scalar_node(value, t, shape, "full")), o);
}
Tensor zeros(IntList shape, TensorOptions o) {
  return full(std::move(shape), 0.0, o.dtype_ ? o : o.dtype(kDefaultFloat));
}
Tensor ones(IntList shape, TensorOptions o) {
  return full(std::move(shape), 1.0, o.dtype_ ? o : o.dtype(kDefaultFloat));
}
Tensor empty(IntList shape, TensorOptions o) { return zeros(std::move(shape), o); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.dtype()); }
Tensor full_like(const Tensor& t, const Scalar& value) {
  return make_tensor(detail::checked_scalar_node(value, t.dtype(), t.sizes(), "full_like"));
}
Tensor scalar_tensor(const Scalar& v, TensorOptions o) {
  return full({}, v, o.dtype_ ? o : o.dtype(kDefaultFloat));  // float32 for any value, as libtorch
}

Tensor arange(const Scalar& end, TensorOptions o) { return arange(0, end, 1, o); }
namespace {

// The number of elements of [start, end) by step, exactly (in 128 bits: the span of two int64
// values does not fit 64).
int64_t int_range_count(int64_t start, int64_t end, int64_t step) {
  const __int128 span = static_cast<__int128>(end) - start;
  const __int128 n =
      (span + step + (step > 0 ? -1 : 1)) / step;  // ceil(span / step), span/step >= 0
  if (n > INT64_MAX) throw ValueError("arange: too many elements");
  return static_cast<int64_t>(n);
}

// An integer arange, as libtorch computes it: the bounds and step converted to int64 (checked;
// a float bound truncates), the values start + i * step in int64, converted to the dtype as a cast
// wraps. The count is exact when every scalar is an integer, and for int64 (counted from the
// converted bounds, as libtorch does); other integer dtypes with a float scalar count
// ceil((end - start) / step) in doubles, as libtorch does.
Tensor int_arange(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType t) {
  for (const Scalar* v : {&start, &end, &step}) detail::check_scalar_fits(*v, kInt64, "arange");
  const int64_t s = start.to_int(), e = end.to_int(), st = step.to_int();
  if (st == 0) throw ValueError("arange: step must be nonzero");
  if ((st > 0 && e < s) || (st < 0 && e > s))
    throw ValueError("arange: upper bound and larger bound inconsistent with step sign");
  const bool exact = t == kInt64 || (start.kind() != kFloat64 && end.kind() != kFloat64 &&
                                     step.kind() != kFloat64);
  const double nd = std::ceil((end.to_double() - start.to_double()) / step.to_double());
  if (!exact && !(nd >= 0 && nd < 9.2e18)) throw ValueError("arange: invalid number of elements");
  const int64_t n = exact ? int_range_count(s, e, st) : static_cast<int64_t>(nd);
  auto storage = std::make_shared<runtime::Storage>(t, n);
  void* p = storage->data();
  switch (t) {
    case kInt64:
      fill_int_range<int64_t>(p, s, st, n);
      break;
    case kInt32:
      fill_int_range<int32_t>(p, s, st, n);
      break;
    default:  // the narrower types, bool (x != 0)
      for (int64_t i = 0; i < n; i++)
        detail::store_int(
            p, t, i,
            static_cast<int64_t>(static_cast<uint64_t>(s) +
                                 static_cast<uint64_t>(i) * static_cast<uint64_t>(st)));
      break;
  }
  return constant_tensor(storage, {n});
}

}  // namespace

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o) {
  bool floating = start.kind() == kFloat64 || end.kind() == kFloat64 || step.kind() == kFloat64;
  ScalarType t = o.dtype_.value_or(floating ? kDefaultFloat : kInt64);
  if (!is_floating_point(t)) return with_grad(int_arange(start, end, step, t), o);
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (st == 0) throw ValueError("arange: step must be nonzero");
  if ((st > 0 && e < s) || (st < 0 && e > s))
    throw ValueError("arange: upper bound and larger bound inconsistent with step sign");
  auto n = static_cast<int64_t>(std::ceil((e - s) / st));
  auto storage = std::make_shared<runtime::Storage>(t, n);
  void* p = storage->data();
  if (t == kFloat32)
    fill_range<float>(p, s, st, n);
  else if (t == kFloat64)
    fill_range<double>(p, s, st, n);
  else  // float16, bfloat16: computed in double, rounded once
    for (int64_t i = 0; i < n; i++) detail::store_double(p, t, i, s + st * static_cast<double>(i));
  return with_grad(constant_tensor(storage, {n}), o);
}

Tensor eye(int64_t n, TensorOptions o) { return eye(n, n, o); }
Tensor eye(int64_t n, int64_t m, TensorOptions o) {
  check_shape({n, m}, "eye");
  ScalarType t = o.dtype_.value_or(kDefaultFloat);
  std::vector<double> v(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < std::min(n, m); i++) v[i * m + i] = 1;
  auto storage = std::make_shared<runtime::Storage>(t, n * m);
  fill_from_doubles(storage->data(), t, v);
  return with_grad(constant_tensor(storage, {n, m}), o);
}

namespace detail {
void next_rng_key(int64_t n, int64_t* key) {
  auto& g = generator();
  std::lock_guard<std::mutex> l(g.mu);
  key[0] = static_cast<int64_t>(g.seed);
  key[1] = static_cast<int64_t>(g.counter);
  g.counter += static_cast<uint64_t>(n);
}

// rand()'s key buffers and their draws, by address; an entry whose buffer is gone is stale (its
// address may be reused) and is pruned as the table grows.
struct RngKeys {
  struct Key {
    std::weak_ptr<runtime::Storage> storage;
    int64_t draws;
  };
  std::mutex mu;
  std::unordered_map<const runtime::Storage*, Key> keys;
  size_t pruned_size = 0;
};
RngKeys& rng_keys() {
  static RngKeys* k = new RngKeys();  // never destroyed: keys may be released at exit
  return *k;
}

void note_rng_key(const engine::StorageRef& key, int64_t draws) {
  RngKeys& r = rng_keys();
  std::lock_guard<std::mutex> l(r.mu);
  if (r.keys.size() >= 2 * r.pruned_size + 64) {
    std::erase_if(r.keys, [](auto& e) { return e.second.storage.expired(); });
    r.pruned_size = r.keys.size();
  }
  r.keys[key.get()] = {key, draws};
}

int64_t rng_draws(const runtime::Storage& s) {
  RngKeys& r = rng_keys();
  std::lock_guard<std::mutex> l(r.mu);
  auto it = r.keys.find(&s);
  if (it == r.keys.end() || it->second.storage.lock().get() != &s) return 0;
  return it->second.draws;
}
}  // namespace detail

struct ScopedGenerator::State : Generator {};

ScopedGenerator::ScopedGenerator(uint64_t seed)
    : state_(std::make_unique<State>()), previous_(t_scoped) {
  state_->seed = seed;
  t_scoped = state_.get();
}

ScopedGenerator::~ScopedGenerator() { t_scoped = static_cast<Generator*>(previous_); }

void manual_seed(uint64_t seed) {
  if (auto* o = detail::access_observer()) o->reseed();
  auto& g = generator();
  std::lock_guard<std::mutex> l(g.mu);
  g.seed = seed;
  g.counter = 0;
}

namespace {
// A RAND node of dtype t over shape: float32 / float64 uniforms, or (int64) integers of
// [low, low + range). Its key buffer {seed, counter, low, range} is data, not code: a replayed
// kernel reads a fresh key, and one kernel serves every range.
Tensor random_node(IntList shape, ScalarType t, int64_t low = 0, uint64_t range = 0) {
  const int64_t n = ir::shape_numel(shape);
  auto key = std::make_shared<runtime::Storage>(kInt64, 4);
  auto* k = static_cast<int64_t*>(key->data());
  detail::note_rng_key(key, n);
  detail::next_rng_key(n, k);
  k[2] = low;
  k[3] = static_cast<int64_t>(range);
  return make_tensor(ir::make_node(Op::RAND, t, {engine::make_buffer(key, {4})}, {}, shape));
}
}  // namespace

Tensor rand(IntList shape, TensorOptions o) {
  check_shape(shape, "rand");
  ScalarType t = o.dtype_.value_or(kDefaultFloat);
  if (!is_floating_point(t))
    throw DTypeError(std::string("rand: dtype must be floating point, got ") + dtype_name(t));
  return with_grad(random_node(shape, t), o);
}

namespace {
// The n values of a RAND node of T's dtype, as its kernel draws them (kernel_scalar.h):
// counter = key[1] + index.
template <typename T>
std::vector<T> host_draws(int64_t n, T (*draw)(uint64_t, uint64_t)) {
  if (n < 0) throw ValueError("rand_values: negative count " + std::to_string(n));
  if (auto* o = detail::access_observer()) o->host_data();  // a replay would not draw again
  int64_t key[2];
  detail::next_rng_key(n, key);
  std::vector<T> v(static_cast<size_t>(n));
  const auto seed = static_cast<uint64_t>(key[0]), first = static_cast<uint64_t>(key[1]);
  for (int64_t i = 0; i < n; i++) v[static_cast<size_t>(i)] = draw(seed, first + uint64_t(i));
  return v;
}
}  // namespace

std::vector<float> rand_values(int64_t n) { return host_draws<float>(n, ember_rand); }
std::vector<double> rand_values_f64(int64_t n) { return host_draws<double>(n, ember_rand53); }

Tensor realized_clone(const Tensor& t) {
  const ir::Node* n = node_of(t).get();
  while (n->op == Op::RESHAPE || n->op == Op::EXPAND || n->op == Op::PERMUTE) n = n->src[0].get();
  if (n->op != Op::CONST || detail::access_observer()) {
    Tensor c = t.detach().clone();
    c.realize();
    return c;
  }
  // The fill kernel's value: ir::make_const keeps it as the dtype holds it (float32 rounded;
  // integers exactly, in arg.ints), and the kernel's literal prints it back exactly.
  const int64_t numel = t.numel();
  auto storage = std::make_shared<runtime::Storage>(t.dtype(), numel);
  if (n->arg.ints.empty()) {
    fill_from_doubles(storage->data(), t.dtype(),
                      std::vector<double>(static_cast<size_t>(numel), n->arg.f));
  } else {
    const int64_t v = n->arg.ints[0];
    void* p = storage->data();
    switch (t.dtype()) {
      case kInt64:
        std::fill_n(static_cast<int64_t*>(p), numel, v);
        break;
      case kInt32:
        std::fill_n(static_cast<int32_t*>(p), numel, static_cast<int32_t>(v));
        break;
      default:  // the narrower integers, bool
        for (int64_t i = 0; i < numel; i++) detail::store_int(p, t.dtype(), i, v);
        break;
    }
  }
  return constant_tensor(storage, t.sizes());
}

Tensor randn(IntList shape, TensorOptions o) {
  ScalarType t = o.dtype_.value_or(kDefaultFloat);
  IntList two = shape;
  two.insert(two.begin(), 2);
  Tensor u = rand(two, t);
  // Box-Muller: u1 in (0, 1] keeps the log finite.
  Tensor u1 = Scalar(1.0) - u.select(0, 0), u2 = u.select(0, 1);
  Tensor r = (u1.log() * -2.0).sqrt() * (u2 * (2 * M_PI)).cos();
  return with_grad(r.contiguous(), o);
}

Tensor randint(int64_t low, int64_t high, IntList shape, TensorOptions o) {
  check_shape(shape, "randint");
  if (high <= low)
    throw ValueError("randint: expected low < high, got low=" + std::to_string(low) +
                     ", high=" + std::to_string(high));
  ScalarType t = o.dtype_.value_or(kInt64);
  if (!is_floating_point(t)) {
    // As libtorch: an integer dtype must hold every value of the range (no silent wrap).
    const int64_t bits = static_cast<int64_t>(element_size(t)) * 8 - (is_unsigned(t) ? 0 : 1);
    const int64_t lo = is_unsigned(t) ? 0 : (t == kInt64 ? INT64_MIN : -(int64_t{1} << bits));
    const int64_t hi = t == kBool                    ? 1
                       : t == kInt64 || t == kUInt64 ? INT64_MAX
                                                     : (int64_t{1} << bits) - 1;
    if (low < lo || high - 1 > hi)
      throw ValueError("randint: [" + std::to_string(low) + ", " + std::to_string(high) +
                       ") does not fit " + dtype_name(t) + " (its values are " +
                       std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  }
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  Tensor r = random_node(shape, kInt64, low, range);
  return t == kInt64 ? r : r.to(t);
}

// ---- copies -------------------------------------------------------------------------------------
Tensor Tensor::contiguous() const {
  const NodeRef& n = node_of(*this);
  if (n->op == Op::BUFFER) return *this;
  return make_tensor(ir::make_node(Op::CONTIGUOUS, n->dtype, {n}), {this});
}

Tensor Tensor::clone() const {
  static std::atomic<int64_t> next{1};
  ir::Arg a;
  a.ints = {next++};  // unique: a clone never shares a buffer
  return make_tensor(ir::make_node(Op::CONTIGUOUS, dtype(), {node_of(*this)}, a), {this});
}

Tensor Tensor::detach() const {
  // Always a DETACH node, even over a buffer: gradients are found by walking the graph, so a
  // detached parameter must not be the parameter's own node.
  const NodeRef& n = node_of(*this);
  if (n->op == Op::DETACH) return detail::make_tensor_rg(n, false);
  return detail::make_tensor_rg(ir::make_node(Op::DETACH, n->dtype, {n}), false);
}

}  // namespace ember
