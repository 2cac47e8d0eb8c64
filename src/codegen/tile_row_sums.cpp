// The row sums of the tiled reduce (render_tile.h's TileRowSums): a bias gradient beside its
// weight gradient (schedule/fuse_row_sums.h). A separate pass over the row operand per cache
// block, not part of the register tile: vectorised along the rows when the operand is contiguous
// along them (dZ), and it brings the block's rows into cache for the tile loop that follows.
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Expr;

// A row sum's term that is a plain load of the sum's type, contiguous along the rows (dZ of a
// bias gradient): read as vectors of rows.
bool TileRowSums::vector_rows(const Expr& e) const {
  return W_ > 1 && e.kind == Expr::Kind::Load && !e.view.has_mask() &&
         e.view.strides[p_.row] == 1 && e.view.shape[p_.row] > 1 && e.dtype == p_.reduce->dtype;
}

void TileRowSums::declare(std::ostringstream& s) const {
  for (size_t j = 0; j < p_.sums.size(); j++)
    s << "  " << T_ << " rs" << j << "[" << nc_ << "], rsb" << j << "[" << nc_ << "];\n";
}

void TileRowSums::zero(std::ostringstream& s) const {
  for (size_t j = 0; j < p_.sums.size(); j++)
    s << "    for (int64_t n = 0; n < " << nc_ << "; n++) rs" << j << "[n] = 0;\n";
}

void TileRowSums::accumulate(std::ostringstream& s, ExprEmitter& em) const {
  if (p_.sums.empty()) return;
  s << "      for (int64_t kb = kc; kb < ke; kb += " << block_ << ") {\n";
  s << "        const int64_t kbe = kb + " << block_ << " < ke ? kb + " << block_ << " : ke;\n";
  std::vector<std::string> idx = base_;
  idx[p_.row] = "n";
  idx[p_.red] = "k";
  for (size_t j = 0; j < p_.sums.size(); j++) {
    if (vector_rows(*p_.sums[j])) {
      // Strips of 4 vectors of rows, then of one, then single rows: each strip's sums stay in
      // registers across the block's k (the loop below keeps them in rsb, a store-to-load chain
      // per k). Each row still adds its terms in k order from zero: the same sums, bit for bit.
      // The (128x10000)^T @ (10000x128) weight gradient: the row sums cost ~4% of the kernel.
      const Expr& e = *p_.sums[j];
      s << "        {\n        int64_t n = n_lo;\n";
      for (int64_t nv : {int64_t{4}, int64_t{1}}) {
        s << "        for (; n + " << nv * W_ << " <= n_hi; n += " << nv * W_ << ") {\n";
        for (int64_t v = 0; v < nv; v++) s << "          " << VT_ << " s" << v << " = {0};\n";
        s << "          for (int64_t k = kb; k < kbe; k++) {\n";
        for (int64_t v = 0; v < nv; v++) {
          std::vector<std::string> vi = idx;
          vi[p_.row] = "(n + " + std::to_string(v * W_) + ")";
          const std::string at =
              "b" + std::to_string(e.buf) + " + " + ExprEmitter::index(e.view, vi);
          s << "            s" << v << " += " << (e.dtype == kFloat32 ? "ember_ldf(" : "ember_ldd(")
            << at << ");\n";
        }
        s << "          }\n";
        for (int64_t v = 0; v < nv; v++)
          s << "          " << (e.dtype == kFloat32 ? "ember_stf(" : "ember_std(") << "rsb" << j
            << " + (n - n_lo) + " << v * W_ << ", s" << v << ");\n";
        s << "        }\n";
      }
      s << "        for (; n < n_hi; n++) {\n          " << T_ << " s = 0;\n";
      s << "          for (int64_t k = kb; k < kbe; k++) {\n";
      ExprEmitter::Memo memo;
      const std::string v = em.emit(e, s, "            ", memo, idx);
      s << "            s += " << v << ";\n          }\n";
      s << "          rsb" << j << "[n - n_lo] = s;\n        }\n";
      s << "        }\n";
      s << "        for (int64_t n = n_lo; n < n_hi; n++) rs" << j << "[n - n_lo] += rsb" << j
        << "[n - n_lo];\n";
      continue;
    }
    s << "        for (int64_t n = n_lo; n < n_hi; n++) rsb" << j << "[n - n_lo] = 0;\n";
    // Walk memory in order: rows innermost when the term is contiguous along them.
    const bool k_outer = strided_loads({p_.sums[j]}, p_.red) >= strided_loads({p_.sums[j]}, p_.row);
    const std::string ko = "for (int64_t k = kb; k < kbe; k++)",
                      no = "for (int64_t n = n_lo; n < n_hi; n++)";
    s << "        " << (k_outer ? ko : no) << "\n          " << (k_outer ? no : ko) << " {\n";
    ExprEmitter::Memo memo;
    const std::string v = em.emit(*p_.sums[j], s, "            ", memo, idx);
    s << "            rsb" << j << "[n - n_lo] += " << v << ";\n          }\n";
    s << "        for (int64_t n = n_lo; n < n_hi; n++) rs" << j << "[n - n_lo] += rsb" << j
      << "[n - n_lo];\n";
  }
  s << "      }\n";
}

std::string TileRowSums::part(size_t j, const std::string& slice) const {
  int64_t bt = 1;
  for (int d = 0; d < p_.row; d++) bt *= k_.full_shape[d];
  return "part + " + std::to_string(bt * s_ * npad_ * (mpad_ + static_cast<int64_t>(j))) +
         " + (bt * " + std::to_string(s_) + " + " + slice + ") * " + std::to_string(npad_);
}

std::string TileRowSums::out(size_t j) const {
  std::vector<std::string> idx = base_;
  idx[p_.row] = "n";
  return "b" + std::to_string(j + 1) + "[" + ExprEmitter::index(k_.more_outputs[j].view, idx) + "]";
}

void TileRowSums::store(std::ostringstream& s) const {
  for (size_t j = 0; j < p_.sums.size(); j++) {
    s << "    for (int64_t n = n_lo; n < n_hi; n++) ";
    if (s_ > 1)
      s << "(" << part(j, "sl") << ")[n] = rs" << j << "[n - n_lo];\n";
    else
      s << out(j) << " = rs" << j << "[n - n_lo];\n";
  }
}

void TileRowSums::finish(std::ostringstream& s) const {
  for (size_t j = 0; j < p_.sums.size(); j++) {
    s << "    for (int64_t n = n_lo; n < n_hi; n++) {\n";
    s << "      " << T_ << " t_ = (" << part(j, "0") << ")[n];\n";
    s << "      for (int64_t q = 1; q < " << s_ << "; q++) t_ = t_ + (" << part(j, "q")
      << ")[n];\n";
    s << "      " << out(j) << " = t_;\n    }\n";
  }
}

}  // namespace ember::codegen
