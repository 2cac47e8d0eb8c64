// Tensor metadata, type promotion and the shared graph-building helpers.
#include <atomic>
#include <cfloat>
#include <cmath>
#include <iomanip>
#include <mutex>
#include <sstream>

#include "ember/grad_mode.h"
#include "ember/host_values.h"
#include "ember/support/kernel_scalar.h"
#include "ember/support/recycled_alloc.h"
#include "engine/launch_list.h"
#include "engine/launch_sink.h"
#include "tensor/jit_static.h"
#include "tensor/tensor_impl.h"

namespace ember {

using ir::NodeRef;
using ir::Op;

namespace {
thread_local bool g_grad_enabled = true;
thread_local detail::AccessObserver* g_observer = nullptr;
std::atomic<uint64_t> g_next_serial{1};

struct PendingWrites {
  std::mutex mu;
  std::vector<std::weak_ptr<TensorImpl>> impls;
  size_t pruned_size = 0;
  // !impls.empty(), read without the lock: every jit call asks, and almost always there are none
  // (a write noted on this thread is seen; one noted on another thread races the call anyway).
  std::atomic<bool> any{false};
};
PendingWrites& pending() {
  static PendingWrites p;
  return p;
}
}  // namespace

NoGradGuard::NoGradGuard() : prev_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = prev_; }

namespace detail {

bool grad_mode_enabled() { return g_grad_enabled; }

uint64_t next_tensor_serial() { return g_next_serial.fetch_add(1, std::memory_order_relaxed); }
AccessObserver*& access_observer() { return g_observer; }

void note_pending_write(const Tensor& t) {
  // A compile-only thread's writes (throwaway state, realized by that thread) are no other
  // thread's to realize: a jit call on another thread flushes the pending writes.
  if (engine::compile_only()) return;
  auto& p = pending();
  std::lock_guard<std::mutex> l(p.mu);
  if (p.impls.size() >= 2 * p.pruned_size + 64) {  // amortised pruning of realized entries
    std::erase_if(p.impls, [](auto& w) {
      auto i = w.lock();
      return !i || !i->assign_target;
    });
    p.pruned_size = p.impls.size();
  }
  p.impls.push_back(t.impl()->weak_from_this());
  p.any.store(true, std::memory_order_release);
}

std::vector<Tensor> pending_writes() {
  auto& p = pending();
  if (!p.any.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> l(p.mu);
  p.any.store(false, std::memory_order_relaxed);
  std::vector<Tensor> out;
  for (auto& w : p.impls)
    if (auto i = w.lock(); i && i->assign_target) out.emplace_back(std::move(i));
  p.impls.clear();
  p.pruned_size = 0;
  return out;
}

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!g_grad_enabled) return false;
  for (auto* t : inputs)
    if (t && t->defined() && t->impl()->requires_grad) return true;
  return false;
}

Tensor make_tensor_rg(NodeRef node, bool requires_grad) {
  // Recycled blocks: an eager call and a jit replay make one tensor per output.
  auto impl = std::allocate_shared<TensorImpl>(support::RecycledAlloc<TensorImpl>{});
  impl->node = std::move(node);
  impl->requires_grad = requires_grad;
  if (g_observer) g_observer->created(impl);
  return Tensor(std::move(impl));
}

Tensor make_tensor(NodeRef node, std::initializer_list<const Tensor*> inputs) {
  return make_tensor_rg(std::move(node), any_requires_grad(inputs));
}

const NodeRef& node_of(const Tensor& t) {
  if (!t.defined()) throw ValueError("operation on an undefined tensor");
  if (g_observer) g_observer->read(t);
  return t.impl()->node;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim == 0 ? 1 : ndim;  // 0-d tensors accept dim 0 and -1, as in PyTorch
  if (dim < -n || dim >= n)
    throw IndexError(std::string(op ? op : "") + (op ? ": " : "") +
                     "Dimension out of range (expected to be in range of [" + std::to_string(-n) +
                     ", " + std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

DimVector broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n, 0);
  for (size_t i = 0; i < n; i++) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(std::string(op) + ": shapes " + ir::shape_str(a) + " and " +
                       ir::shape_str(b) + " do not broadcast (dim " + std::to_string(i) + ": " +
                       std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

NodeRef cast(const NodeRef& n, ScalarType t) {
  if (n->dtype == t) return n;
  // A constant is folded by the CAST rule; integer constants exactly (but a uint64 above int64's
  // range, whose bits make_const_int would read as negative, is converted by a kernel).
  const bool big_u64 = n->dtype == kUInt64 && !n->arg.ints.empty() && n->arg.ints[0] < 0;
  if (n->op == Op::CONST && !(big_u64 && is_floating_point(t)))
    return n->arg.ints.empty() ? ir::make_const(n->arg.f, t)
                               : ir::make_const_int(n->arg.ints[0], t);
  return ir::make_node(Op::CAST, t, {n});
}

// The graph helpers below build their shapes in DimVectors, which keep up to six dims in
// themselves: a small eager call is bound by its allocations (issue 11).
NodeRef reshape_node(NodeRef n, const DimVector& shape) {
  if (n->shape == shape) return n;
  ir::Arg a;
  a.ints = shape;
  const ScalarType t = n->dtype;
  return ir::make_node(Op::RESHAPE, t, ir::src_list(std::move(n)), std::move(a));
}

NodeRef broadcast_to(NodeRef n, const DimVector& shape) {
  if (n->shape == shape) return n;
  if (n->shape.size() != shape.size()) {  // leading 1s first
    DimVector s(shape.size() - n->shape.size(), 1);
    for (auto d : n->shape) s.push_back(d);
    const bool done = s == shape;
    n = reshape_node(std::move(n), s);
    if (done) return n;
  }
  ir::Arg a;
  a.ints = shape;
  const ScalarType t = n->dtype;
  return ir::make_node(Op::EXPAND, t, ir::src_list(std::move(n)), std::move(a));
}

NodeRef const_node(double v, ScalarType t, const DimVector& shape) {
  return broadcast_to(ir::make_const(v, t), shape);
}

NodeRef scalar_node(const Scalar& s, ScalarType t, const DimVector& shape) {
  // An integer scalar never passes through a double (int64 beyond 2^53 would round).
  NodeRef c =
      s.kind() == kFloat64 ? ir::make_const(s.to_double(), t) : ir::make_const_int(s.to_int(), t);
  return broadcast_to(std::move(c), shape);
}

// The range [lo, hi] of an integer dtype, as doubles (int64's and uint64's hi round up to 2^63 and
// 2^64, which the checks below exclude).
std::pair<double, double> int_range(ScalarType t) {
  const double bits = static_cast<double>(element_size(t) * 8);
  if (is_unsigned(t)) return {0, std::ldexp(1.0, static_cast<int>(bits)) - 1};
  return {-std::ldexp(1.0, static_cast<int>(bits) - 1),
          std::ldexp(1.0, static_cast<int>(bits) - 1) - 1};
}

void check_scalar_fits(const Scalar& s, ScalarType t, const char* op) {
  bool fits = true;
  const double d = s.to_double();
  if (t == kFloat32 || t == kBFloat16) {  // bfloat16's range is float32's (to within rounding)
    fits = s.kind() != kFloat64 || !std::isfinite(d) || std::abs(d) <= FLT_MAX;
  } else if (t == kFloat16) {
    // libtorch's c10::overflows: an integer or a finite float beyond 65504 (float16's max).
    fits = s.kind() == kBool || (s.kind() == kFloat64 && !std::isfinite(d)) || std::abs(d) <= 65504;
  } else if (t != kBool && t != kFloat64 && s.kind() != kBool) {
    // libtorch's checked conversion (c10::overflows): an unsigned type takes -max..max from an
    // integer (two's complement wrap); a float must lie within [lowest, max] of the type (no NaN,
    // no inf).
    const auto [lo, hi] = int_range(t);
    if (s.kind() == kFloat64) {
      fits = d >= lo && (t == kInt64 || t == kUInt64 ? d < hi + 1 : d <= hi);
    } else if (t != kInt64 && t != kUInt64) {
      const auto i = static_cast<double>(s.to_int());  // exact: |i| <= 2^32 where it matters
      fits = is_unsigned(t) ? (i >= -hi && i <= hi) : (i >= lo && i <= hi);
    }
  }
  if (fits) return;
  std::ostringstream v;
  if (s.kind() == kFloat64)
    v << std::setprecision(17) << d;
  else
    v << s.to_int();
  throw ValueError(std::string(op) + ": value " + v.str() + " cannot be converted to " +
                   dtype_name(t) + " without overflow");
}

NodeRef checked_scalar_node(const Scalar& s, ScalarType t, const DimVector& shape, const char* op) {
  check_scalar_fits(s, t, op);
  return scalar_node(s, t, shape);
}

ScalarType scalar_default_dtype(const Scalar& s) {
  if (s.kind() == kFloat64) return kDefaultFloat;
  return s.kind();
}

NodeRef binary(Op op, NodeRef a, NodeRef b, ScalarType out_dtype, const char* name) {
  if (a->shape == b->shape)
    return ir::make_node(op, out_dtype, ir::src_list(std::move(a), std::move(b)));
  const DimVector s = broadcast_shapes(a->shape, b->shape, name);
  NodeRef x = broadcast_to(std::move(a), s);
  return ir::make_node(op, out_dtype, ir::src_list(std::move(x), broadcast_to(std::move(b), s)));
}

}  // namespace detail

// ---- promotion (PyTorch's ResultTypeState)
// --------------------------------------------------------
namespace {
struct PromoState {
  std::optional<ScalarType> dim, zero, wrapped;
};
void add_tensor(PromoState& s, const Tensor& t) {
  auto& slot = t.dim() > 0 ? s.dim : s.zero;
  slot = slot ? promote_types(*slot, t.dtype()) : t.dtype();
}
void add_scalar(PromoState& s, const Scalar& v) {
  ScalarType t = detail::scalar_default_dtype(v);
  s.wrapped = s.wrapped ? promote_types(*s.wrapped, t) : t;
}
std::optional<ScalarType> combine(std::optional<ScalarType> higher,
                                  std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating_point(*higher)) return higher;
  if (*higher == kBool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}
ScalarType finish(const PromoState& s) { return *combine(s.dim, combine(s.zero, s.wrapped)); }
}  // namespace

ScalarType result_type(const Tensor& a, const Tensor& b) {
  PromoState s;
  add_tensor(s, a);
  add_tensor(s, b);
  return finish(s);
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  PromoState s;
  add_tensor(s, a);
  add_scalar(s, b);
  return finish(s);
}

int64_t Scalar::float_to_int64(double v) { return ember_f2i64(v); }

// ---- metadata
// -------------------------------------------------------------------------------------
const DimVector& Tensor::sizes() const { return detail::node_of(*this)->shape; }

Tensor& Tensor::operator=(const Tensor& o) {
  if (impl_ && impl_ != o.impl_ && impl_->jit_read) impl_->rebinds++;
  impl_ = o.impl_;
  return *this;
}
Tensor& Tensor::operator=(Tensor&& o) noexcept {
  if (impl_ && impl_ != o.impl_ && impl_->jit_read) impl_->rebinds++;
  impl_ = std::move(o.impl_);
  return *this;
}
int64_t Tensor::dim() const { return static_cast<int64_t>(sizes().size()); }
int64_t Tensor::numel() const { return ir::shape_numel(sizes()); }
ScalarType Tensor::dtype() const { return detail::node_of(*this)->dtype; }
const ir::NodeRef& Tensor::node() const { return detail::node_of(*this); }

bool Tensor::is_realized() const { return node()->op == Op::BUFFER; }

const void* Tensor::storage_id() const {
  const NodeRef& n = node();
  return n->op == Op::BUFFER ? engine::storage_of(*n).get() : nullptr;
}

void* Tensor::data_ptr() const {
  const NodeRef& n = node();
  if (n->op != Op::BUFFER)
    throw ValueError(
        "data_ptr: the tensor is not a realized buffer (call realize(); a view needs "
        "contiguous() first)");
  engine::sync();  // kernels held back by a DeferLaunches scope write it first
  return engine::storage_of(*n)->data();
}

SharedData shared_data(const Tensor& t) {
  detail::check_data_readable(t);  // an export reads the data
  const ir::Node* n = t.node().get();
  if (n->op == Op::DETACH) n = n->src[0].get();
  if (n->op != Op::BUFFER) return {};
  engine::sync();  // as data_ptr()
  const engine::StorageRef& storage = engine::storage_of(*n);
  return {storage->data(), storage};
}

int64_t Tensor::size(int64_t d) const {
  if (dim() == 0) throw IndexError("size(): a 0-d tensor has no dims");
  return sizes()[detail::wrap_dim(d, dim())];
}

}  // namespace ember
