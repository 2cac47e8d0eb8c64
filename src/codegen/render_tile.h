// The register-tiled reduce renderer: matrix products (and any float SUM reduce whose term combines
// a row-only part and a column-only part with + - *) as an explicit-SIMD micro-kernel with
// accumulators in registers, optional packing, reduce-axis cache blocking and row blocks for the
// thread pool. Selected by a Vectorize action (opt.h). Internal to codegen.
#pragma once
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/c_expr.h"
#include "codegen/opt.h"
#include "codegen/render_c.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// How a kernel maps onto the tiled reduce. Loop space [outer..., row, col, red].
struct TilePlan {
  int row = -1, col = -1, red = -1;
  const schedule::Expr* reduce = nullptr;
  /// Maximal subterms that vary along col but not along row (the "B" operands): loaded as vectors.
  std::vector<const schedule::Expr*> cols;
  /// Every `cols` term is an unmasked load with unit stride along col (readable without packing
  /// when the column count is a multiple of the tile).
  bool direct = false;
  /// Maximal subterms that vary along row but not along col (the "A" operands): broadcast as
  /// scalars, from memory or from a packed panel.
  std::vector<const schedule::Expr*> rows;
  /// Every `rows` term is an unmasked load (cheap to read in place; otherwise it is computed once
  /// into a panel instead of once per column tile).
  bool rows_direct = false;
};

/// The plan, or nullopt when the kernel does not fit: it must be a float32/float64 SUM over one
/// (last) reduce axis with at least two output axes, whose term depends on both the row and the
/// column axis only through + - * and negation of same-dtype operands.
std::optional<TilePlan> plan_tile(const schedule::Kernel& k);

std::string render_tile(const schedule::Kernel& k, const Opts& o, const std::string& fn);
/// Split-K's scratch (kernel_scratch in render_c.h); none without a SplitReduce action.
Scratch tile_scratch(const schedule::Kernel& k, const Opts& o);
/// The row count the kernel reads at run time (runtime_rows in render_c.h), or -1.
int64_t tile_runtime_rows(const schedule::Kernel& k, const Opts& o);
/// Units of work the thread pool splits (batch index x row block).
int64_t tile_outer_extent(const schedule::Kernel& k, const Opts& o);

/// The generated function's head: signature, typed buffer pointers (b0 the output), and a
/// compile-time check that `vector_type` is `vector_bytes` wide (`what` names the renderer).
void render_kernel_head(std::ostringstream& s, const std::string& fn, const schedule::Kernel& k,
                        const char* vector_type, int64_t vector_bytes, const char* what);
/// The scalar store after a tile of sums (the tiled and the dot renderers): for each row i below
/// `rows` with n0 + i < n_hi and each column j < mv (variables of the generated code), the sum at
/// tl[i * stride + j] goes through the kernel's ops after the reduce into b0.
void render_scalar_store(std::ostringstream& s, const std::string& ind, const schedule::Kernel& k,
                         const TilePlan& p, ExprEmitter& em, const std::vector<std::string>& base,
                         const char* type, int64_t rows, int64_t stride);

}  // namespace ember::codegen
