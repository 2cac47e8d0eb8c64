// How a product kernel's reduce term splits into row and column operands: what the tiled reduce
// (render_tile.h) and the dot-product kernel (render_dot.h) are built on, and what their plans
// (kernel_plan.h) are checked against. Internal to codegen.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "schedule/kernel.h"

namespace ember::codegen {

/// Loop space [outer..., row, col, red].
struct TileOperands {
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
  /// The terms of the kernel's further outputs (more_outputs, in order): each output is a SUM of
  /// its term over the reduce axis, and the term does not vary along col (a bias gradient beside
  /// a weight gradient, schedule/fuse_row_sums.h). They are summed per row block, once.
  std::vector<const schedule::Expr*> sums;
};

/// The loop axes an expression's value depends on, as a bit set (memoised per expression).
class AxisDeps {
 public:
  uint64_t operator()(const schedule::Expr& e);

 private:
  std::unordered_map<const schedule::Expr*, uint64_t> memo_;
};

/// The operands, or nullopt when the kernel is no product: it must be a float32/float64 SUM over
/// one (last) reduce axis with at least two output axes, whose term depends on both the row and
/// the column axis only through + - * and negation of same-dtype operands; further outputs must
/// be row sums (TileOperands::sums) stored at index 0 along col.
std::optional<TileOperands> tile_operands(const schedule::Kernel& k);

/// Whether every operand of the reduce term reads as vectors along the reduce axis (the dot
/// kernel): unmasked loads of stride 1 (or 0) along it, unmasked constants, and + - * of the
/// reduce's dtype.
bool dot_fits(const TileOperands& p);

/// Loads under `terms` whose stride along `axis` is neither 0 nor 1: a loop over `axis` gathers.
int strided_loads(const std::vector<const schedule::Expr*>& terms, int axis);
/// Whether the row operands are read across the reduce axis (more of their loads gather along k
/// than along the rows: a transposed operand); their panels then follow that memory order.
bool tile_rows_kmajor(const TileOperands& p);
/// Whether the tiled reduce's column panel (render_tile.h's TileColPanel) holds one column tile,
/// packed in the column loop: packed columns outside the rows, read contiguous along the columns
/// (packed for the panel's place in L1, not to transpose them: a pack per tile costs a copy, no
/// gather).
bool col_panel_per_tile(const TileOperands& p, bool pack_cols, bool cols_outer);

}  // namespace ember::codegen
