// The kernel IR: what the scheduler hands to codegen. One kernel computes one materialised value
// over a loop space `full_shape`; axes listed in `reduce_axes` are summed/maxed/multiplied away,
// the rest are output axes. Every memory access carries an ir::View over the loop space (rank =
// full_shape.size(); above the reduce, reduce axes have size 1).
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
  std::vector<int64_t> axes;  // Reduce: reduced axes of the loop space
};

/// A kernel argument: slot 0 is the output, then the inputs in first-use order.
struct KernelBuffer {
  ScalarType dtype;
  int64_t numel;
};

struct Kernel {
  std::vector<int64_t> full_shape;
  std::vector<int64_t> reduce_axes;  // sorted; empty for elementwise kernels
  ExprRef value;                     // the stored value (output space)
  ir::View out_view;                 // store index map (output space)
  std::vector<KernelBuffer> buffers;

  /// Structural key: equal keys mean identical generated code (buffers are positional).
  std::string key() const;
  /// Short readable name, e.g. "r_64_16_128" or "E_4096".
  std::string name() const;
  /// Floating-point / integer operations and bytes touched, for DEBUG=2.
  double flops() const;
  double bytes() const;
};

/// Rewrites views so that adjacent axes that are contiguous in every access merge into one and
/// size-1 axes disappear; output axes come first, reduce axes last.
Kernel simplify(const Kernel& k);

}  // namespace ember::schedule
