// The tiled product in the dialects with work-items (GpuKind::TiledProduct, kernel_plan.h). A
// work-group computes a tile_m x tile_n tile of one batch index's (row, col) outputs. For each
// panel of tile_k steps along the reduce axis, its work-items stage every row operand
// (TileOperands::rows: loads or computed terms, evaluated once per element) into a local
// [tile_m][tile_k] panel and every column operand into a local [tile_k][tile_n] panel (zero past
// the edges), wait at a barrier, and then each work-item adds the reduce term of its reg_m x reg_n
// register tile, rows and columns (tile / reg) apart, from the panels; a second barrier before the
// panels are overwritten. Each panel's terms are summed from zero and then added to the
// accumulator (two-level blocked summation). The epilogue (the kernel's ops after the reduce)
// and the store follow per element of the register tile, inside the edges.
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_c.h"
#include "codegen/render_gpu.h"
#include "codegen/render_tile.h"
#include "codegen/tile_operands.h"
#include "ember/error.h"

namespace ember::codegen {

using schedule::Expr;
using schedule::Kernel;

namespace {

class GpuProductRenderer {
 public:
  GpuProductRenderer(const Kernel& k, const GpuPlan& g, const TileOperands& p, const Dialect& d)
      : k_(k), g_(g), p_(p), d_(d), em_(d), T_(ctype(p.reduce->dtype)) {
    N_ = k.full_shape[p.row];
    M_ = k.full_shape[p.col];
    K_ = k.full_shape[p.red];
    for (int a = 0; a < p.row; a++) base_.push_back("x" + std::to_string(a));
    base_.resize(k.full_shape.size(), "0");
  }

  std::string render(const std::string& fn) {
    std::ostringstream s;
    d_.signature(s, fn, k_);
    const int64_t gn = (N_ + g_.tile_m - 1) / g_.tile_m, gm = (M_ + g_.tile_n - 1) / g_.tile_n;
    s << "  const int64_t g_ = " << d_.group_id() << ", l_ = " << d_.local_id() << ";\n";
    s << "  const int64_t bt = g_ / " << gn * gm << ", tr_ = g_ / " << gm << " % " << gn << " * "
      << g_.tile_m << ", tc_ = g_ % " << gm << " * " << g_.tile_n << ";\n";
    render_batch_index(s, k_, p_);
    s << "  const int64_t ty_ = l_ / " << g_.tile_n / g_.reg_n << ", tx_ = l_ % "
      << g_.tile_n / g_.reg_n << ";\n";
    for (size_t q = 0; q < p_.rows.size(); q++)
      s << "  " << d_.local_array(T_, apanel(q), g_.tile_m * g_.tile_k) << "\n";
    for (size_t q = 0; q < p_.cols.size(); q++)
      s << "  " << d_.local_array(T_, bpanel(q), g_.tile_k * g_.tile_n) << "\n";
    for (int64_t i = 0; i < g_.reg_m; i++)
      for (int64_t j = 0; j < g_.reg_n; j++) s << "  " << T_ << " " << acc(i, j) << " = 0;\n";
    s << "  for (int64_t k0_ = 0; k0_ < " << K_ << "; k0_ += " << g_.tile_k << ") {\n";
    stage(s, p_.rows, true);
    stage(s, p_.cols, false);
    s << "    " << d_.barrier() << "\n";
    s << "    const int64_t kn_ = " << K_ << " - k0_ < " << g_.tile_k << " ? " << K_
      << " - k0_ : " << g_.tile_k << ";\n";
    accumulate(s);
    s << "    " << d_.barrier() << "\n";
    s << "  }\n";
    epilogue(s);
    s << "}\n";
    return s.str();
  }

 private:
  static std::string apanel(size_t q) { return "ap" + std::to_string(q) + "_"; }
  static std::string bpanel(size_t q) { return "bp" + std::to_string(q) + "_"; }
  static std::string acc(int64_t i, int64_t j) {
    return "a" + std::to_string(i) + "_" + std::to_string(j);
  }
  std::string row(int64_t i) const {
    return "(tr_ + ty_ + " + std::to_string(i * (g_.tile_m / g_.reg_m)) + ")";
  }
  std::string col(int64_t j) const {
    return "(tc_ + tx_ + " + std::to_string(j * (g_.tile_n / g_.reg_n)) + ")";
  }

  // The row operands (`rows`) or the column operands into their panels: element e_ of the panel
  // at (row or column, k) = (e_ / tile_k, e_ % tile_k) or (e_ % tile_n, e_ / tile_n), zero
  // outside the kernel's rows, columns or reduce range.
  void stage(std::ostringstream& s, const std::vector<const Expr*>& terms, bool rows) {
    if (terms.empty()) return;
    const int64_t along = rows ? g_.tile_m : g_.tile_n, extent = rows ? N_ : M_;
    const std::string pos =
        rows ? "e_ / " + std::to_string(g_.tile_k) : "e_ % " + std::to_string(along);
    const std::string kk =
        rows ? "e_ % " + std::to_string(g_.tile_k) : "e_ / " + std::to_string(along);
    s << "    for (int64_t e_ = l_; e_ < " << along * g_.tile_k << "; e_ += " << g_.local
      << ") {\n";
    s << "      const int64_t at_ = " << (rows ? "tr_" : "tc_") << " + " << pos << ", k_ = k0_ + "
      << kk << ";\n";
    s << "      if (at_ < " << extent << " && k_ < " << K_ << ") {\n";
    std::vector<std::string> idx = base_;
    idx[rows ? p_.row : p_.col] = "at_";
    idx[p_.red] = "k_";
    ExprEmitter::Memo memo;
    for (size_t q = 0; q < terms.size(); q++) {
      const std::string v = em_.emit(*terms[q], s, "        ", memo, idx);
      s << "        " << (rows ? apanel(q) : bpanel(q)) << "[e_] = " << v << ";\n";
    }
    s << "      } else {\n";
    for (size_t q = 0; q < terms.size(); q++)
      s << "        " << (rows ? apanel(q) : bpanel(q)) << "[e_] = 0;\n";
    s << "      }\n    }\n";
  }

  // The panel's terms of each register-tile element, from zero, then into its accumulator.
  void accumulate(std::ostringstream& s) {
    for (int64_t i = 0; i < g_.reg_m; i++)
      for (int64_t j = 0; j < g_.reg_n; j++) s << "    " << T_ << " p" << acc(i, j) << " = 0;\n";
    s << "    for (int64_t kk_ = 0; kk_ < kn_; kk_++) {\n";
    for (int64_t i = 0; i < g_.reg_m; i++)
      for (int64_t j = 0; j < g_.reg_n; j++) {
        ExprEmitter::Memo memo;
        const std::string r = "(ty_ + " + std::to_string(i * (g_.tile_m / g_.reg_m)) + ")";
        const std::string c = "(tx_ + " + std::to_string(j * (g_.tile_n / g_.reg_n)) + ")";
        for (size_t q = 0; q < p_.rows.size(); q++)
          memo[p_.rows[q]] = apanel(q) + "[" + r + " * " + std::to_string(g_.tile_k) + " + kk_]";
        for (size_t q = 0; q < p_.cols.size(); q++)
          memo[p_.cols[q]] = bpanel(q) + "[kk_ * " + std::to_string(g_.tile_n) + " + " + c + "]";
        std::vector<std::string> idx = base_;
        idx[p_.row] = row(i);
        idx[p_.col] = col(j);
        idx[p_.red] = "(k0_ + kk_)";
        const std::string v = em_.emit(*p_.reduce->src[0], s, "      ", memo, idx);
        s << "      p" << acc(i, j) << " = p" << acc(i, j) << " + " << v << ";\n";
      }
    s << "    }\n";
    for (int64_t i = 0; i < g_.reg_m; i++)
      for (int64_t j = 0; j < g_.reg_n; j++)
        s << "    " << acc(i, j) << " = " << acc(i, j) << " + p" << acc(i, j) << ";\n";
  }

  void epilogue(std::ostringstream& s) {
    for (int64_t i = 0; i < g_.reg_m; i++)
      for (int64_t j = 0; j < g_.reg_n; j++) {
        s << "  if (" << row(i) << " < " << N_ << " && " << col(j) << " < " << M_ << ") {\n";
        ExprEmitter::Memo memo;
        memo[p_.reduce] = acc(i, j);
        std::vector<std::string> idx = base_;
        idx[p_.row] = row(i);
        idx[p_.col] = col(j);
        const std::string v = em_.emit(*k_.value, s, "    ", memo, idx);
        s << "    b0[" << ExprEmitter::index(k_.out_view, idx) << "] = " << v << ";\n";
        s << "  }\n";
      }
  }

  const Kernel& k_;
  const GpuPlan& g_;
  const TileOperands& p_;
  const Dialect& d_;
  ExprEmitter em_;
  const char* T_;
  int64_t N_, M_, K_;
  std::vector<std::string> base_;  // the batch indices x<d>, then "0"
};

}  // namespace

std::string render_gpu(const Kernel& k, const GpuPlan& plan, const std::string& fn,
                       const Dialect& d) {
  if (plan.kind != GpuKind::TiledProduct)
    return render_work_item(k, fn, d, plan.kind == GpuKind::GroupReduce ? plan.local : 0);
  const auto ops = tile_operands(k);
  if (!ops || d.work_item().empty())
    throw Error("internal error: kernel " + k.name() + " is no product the " + d.name() +
                " dialect tiles");
  return GpuProductRenderer(k, plan, *ops, d).render(fn);
}

}  // namespace ember::codegen
