// The kernel IR: what the scheduler hands to codegen. One kernel computes one materialised value
// over a loop space `full_shape`; axes listed in `reduce_axes` are summed/maxed/multiplied away,
// the rest are output axes. Every memory access carries an ir::View over the loop space (rank =
// full_shape.size(); above the reduce, reduce axes have size 1).
//
// A kernel whose value is one element may also hold nests: full reductions, each over its own
// loop space, computed once before the kernel's own loops and read as scalars (e.g. the squared
// norms of twenty gradients summed into one global norm: one launch instead of twenty-one).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/node.h"
#include "ir/view.h"

namespace ember::schedule {

struct Expr;
using ExprRef = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind : uint8_t { Load, Const, Alu, Reduce, Rand };
  Kind kind;
  ir::Op op = ir::Op::CONST;  // Alu / Reduce: the primitive
  ScalarType dtype;
  std::vector<ExprRef> src;
  int buf = -1;               // Load: kernel buffer slot; Rand: slot of the key buffer
  ir::View view;              // Load / Rand: index map; Const: only its mask is used (valid region)
  double value = 0;           // Const
  int64_t ivalue = 0;         // Const of an integer or bool dtype: its exact value
  std::vector<int64_t> axes;  // Reduce: reduced axes of the loop space
  /// Reduce only: a nest. Its loop space is `nest_shape` (the views below it index that space,
  /// not the kernel's), every axis of it is reduced away, and its value is one scalar.
  bool nested = false;
  std::vector<int64_t> nest_shape;
};

/// A kernel argument: slots 0 .. num_outputs() - 1 are the outputs, then the inputs in first-use
/// order.
struct KernelBuffer {
  ScalarType dtype;
  int64_t numel;
};

/// A further stored value of a multi-output kernel (schedule/fuse_outputs.h).
struct KernelOutput {
  ExprRef value;
  ir::View view;
};

struct Kernel {
  std::vector<int64_t> full_shape;
  std::vector<int64_t> reduce_axes;  // sorted; empty for elementwise kernels
  ExprRef value;                     // the value stored in slot 0 (output space)
  ir::View out_view;                 // its store index map (output space)
  /// The values stored in slots 1, 2, ... over the same loop space. Elementwise kernels: every
  /// value of one loop index is computed before any of them is stored, so an output may
  /// overwrite an input that the kernel reads at the same index (an in-place update). Reduce
  /// kernels: sums over the kernel's reduce axis whose store view is 0 along some output axes,
  /// computed once per index of the others (row sums, schedule/fuse_row_sums.h).
  std::vector<KernelOutput> more_outputs;
  std::vector<KernelBuffer> buffers;

  size_t num_outputs() const { return 1 + more_outputs.size(); }

  /// Structural key: equal keys mean identical generated code (buffers are positional).
  std::string key() const;
  /// Short readable name, e.g. "r_64_16_128", "E_4096" or "E_n20" (one element, twenty nests).
  std::string name() const;
  /// Floating-point / integer operations and bytes touched, for DEBUG=2.
  double flops() const;
  double bytes() const;
};

/// The reduce of a reduce kernel's value: the first Reduce met walking down from `e`, not
/// entering nests; nullptr for none.
const Expr* top_reduce(const Expr& e);

/// The kernel's nests in first-use order (a depth-first walk of the values; nests hold none).
std::vector<const Expr*> kernel_nests(const Kernel& k);
/// A nest as a kernel of its own (its loop space, every axis reduced, the parent's buffers): the
/// heuristic and the renderer treat it exactly as the kernel it would be if it were materialised.
Kernel nest_kernel(const Kernel& parent, const Expr& nest);

/// Rewrites views so that adjacent axes that are contiguous in every access merge into one and
/// size-1 axes disappear; output axes come first, reduce axes last. Each nest is simplified in its
/// own loop space.
Kernel simplify(const Kernel& k);

}  // namespace ember::schedule
