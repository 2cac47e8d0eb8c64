// TensorImpl and the helpers every frontend file uses to build graph.
#pragma once
#include <memory>
#include <span>

#include "ember/tensor.h"
#include "engine/buffer_table.h"
#include "ir/node.h"

namespace ember {

namespace detail {
/// A counter stamped on every TensorImpl at creation (a jit capture tells the tensors that
/// existed before it from those the function made).
uint64_t next_tensor_serial();
}  // namespace detail

struct TensorImpl : std::enable_shared_from_this<TensorImpl> {
  // User-provided, so that make_shared does not zero the whole object before the members'
  // initialisers run (an eager op makes one per call).
  TensorImpl() {}
  ir::NodeRef node;
  bool requires_grad = false;
  Tensor grad;
  /// Set by in-place ops on a realized tensor: realize() writes the result into this storage so
  /// that every holder of the buffer (optimizer, jit captures) sees the new values.
  engine::StorageRef assign_target;
  /// Set when a jit capture bound this tensor as one the function read from outside itself;
  /// from then on, every handle rebound away from it (Tensor::operator=) counts in `rebinds`, so
  /// that a replay can tell that a closure variable may now hold another tensor (jit.h).
  bool jit_read = false;
  uint64_t rebinds = 0;
  const uint64_t serial = detail::next_tensor_serial();
};

namespace detail {

/// Wraps a node in a new tensor; requires_grad is set when any input requires grad and grad mode
/// is enabled.
Tensor make_tensor(ir::NodeRef node, std::initializer_list<const Tensor*> inputs = {});
Tensor make_tensor_rg(ir::NodeRef node, bool requires_grad);
bool any_requires_grad(std::initializer_list<const Tensor*> inputs);
bool grad_mode_enabled();

const ir::NodeRef& node_of(const Tensor& t);
/// Wraps a dim into [0, ndim) (a 0-d tensor takes 0 and -1); throws IndexError naming the dim,
/// the valid range and, when given, the op.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = nullptr);
DimVector broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b, const char* op);
ir::NodeRef cast(const ir::NodeRef& n, ScalarType t);
// The node arguments are taken by value: a caller that moves its reference in saves a reference
// taken and dropped (an atomic add each; a small eager call is latency-bound, issue 11).
// Shapes are DimVectors (a node's shape: in place, no allocation), which a Shape converts to.
ir::NodeRef broadcast_to(ir::NodeRef n, const DimVector& shape);
ir::NodeRef reshape_node(ir::NodeRef n, const DimVector& shape);
ir::NodeRef const_node(double v, ScalarType t, const DimVector& shape);
/// The scalar as a constant of dtype t, converted as a cast converts a value (an integer scalar
/// exactly, wrapped to narrower integers): an operand of arithmetic or a comparison.
ir::NodeRef scalar_node(const Scalar& s, ScalarType t, const DimVector& shape);
/// Throws ValueError ("op: value V cannot be converted to T without overflow") unless s fits
/// dtype t by libtorch's checked conversion (tensor.h, Scalar).
void check_scalar_fits(const Scalar& s, ScalarType t, const char* op);
/// scalar_node after check_scalar_fits: a fill value, clamp bound, where or pad value, alpha.
ir::NodeRef checked_scalar_node(const Scalar& s, ScalarType t, const DimVector& shape,
                                const char* op);
/// Applies a binary primitive after broadcasting both sides to a common shape.
ir::NodeRef binary(ir::Op op, ir::NodeRef a, ir::NodeRef b, ScalarType out_dtype, const char* name);
ScalarType scalar_default_dtype(const Scalar& s);
/// x.matmul(w.t()) (Linear's product) without the transposed view: the same graph, one tensor and
/// one node less to make and drop on each eager call (issue 11).
Tensor matmul_transposed(const Tensor& x, const Tensor& w);

/// Reserves n random numbers from the global generator: key = {seed, first counter}.
void next_rng_key(int64_t n, int64_t* key);
/// rand()'s key buffers ({seed, first counter}, read by its kernel): a jit replay refills each
/// with a new key of `draws` numbers, so that a replayed draw is a new draw. rng_draws is 0 for
/// any other buffer.
void note_rng_key(const engine::StorageRef& key, int64_t draws);
int64_t rng_draws(const runtime::Storage& s);

/// Watches what a function does to tensors while ember::jit captures it (tensor/jit.cpp), so
/// that a replay can do the same (or refuse). Set for the calling thread only, null otherwise.
struct AccessObserver {
  virtual ~AccessObserver() = default;
  /// t's node is about to be read (every op and every metadata query goes through node_of).
  virtual void read(const Tensor& t) = 0;
  /// An in-place op is about to give t a new value.
  virtual void assign(const Tensor& t) = 0;
  /// owner->grad is about to be read (write=false) or replaced (write=true).
  virtual void grad_slot(TensorImpl& owner, bool write) = 0;
  /// Host data is being copied into a new tensor (from_blob / from_vector / tensor()).
  virtual void host_data() = 0;
  /// The random generator is being reseeded.
  virtual void reseed() = 0;
  /// A tensor was made.
  virtual void created(const std::shared_ptr<TensorImpl>& t) = 0;
};
AccessObserver*& access_observer();

/// Tensors with an in-place update that is not realized yet (assign_target set). ember::jit
/// realizes them before it captures or replays, so that a function reads their new values.
void note_pending_write(const Tensor& t);
std::vector<Tensor> pending_writes();

}  // namespace detail
}  // namespace ember
