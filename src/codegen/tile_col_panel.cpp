// The tiled reduce's column-operand panels (TileColPanel in render_tile.h): Pack on the column
// axis.
#include <algorithm>
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Expr;

void TileColPanel::declare(std::ostringstream& s) const {
  for (size_t j = 0; j < p_.cols.size(); j++)
    s << "  " << T_ << " pk" << j << "[" << g_.block_k * g_.padded_cols
      << "] __attribute__((aligned(64)));\n";
  if (g_.block_k == g_.k) s << "  int64_t pk_t = -1;\n";
}

// min / max of a bound of the unit's columns (a number, or a variable with column blocks) and a
// number, as code.
std::string TileColPanel::lesser(const std::string& a, int64_t b) const {
  if (g_.col_blocks == 1) return std::to_string(std::min<int64_t>(std::stoll(a), b));
  return "(" + a + " < " + std::to_string(b) + " ? " + a + " : " + std::to_string(b) + ")";
}
std::string TileColPanel::greater(const std::string& a, int64_t b) const {
  if (g_.col_blocks == 1) return std::to_string(std::max<int64_t>(std::stoll(a), b));
  return "(" + a + " > " + std::to_string(b) + " ? " + a + " : " + std::to_string(b) + ")";
}

// Whether every column operand is a plain load, contiguous along k (nn::Linear's W^T): the pack
// is then a transpose of W x W blocks in registers (transpose).
bool TileColPanel::transposable() const {
  if (g_.lanes < 2) return false;
  for (const Expr* e : p_.cols)
    if (e->kind != Expr::Kind::Load || e->dtype != p_.reduce->dtype || e->view.has_mask() ||
        e->view.strides[p_.red] != 1)
      return false;
  return true;
}

// pk{j}[(k - kc) * MPAD + m] for the full W x W blocks of [kc, ke) x the unit's columns below
// M: W vector loads along k (one per column m), log2(W) rounds of two-source shuffles that each
// swap one bit of the row index with the same bit of the lane index, W vector stores along m. 9
// us per pack of a 128 x 128 float W^T became ~2 us at AVX-512 (the element-wise loop gathers):
// the pack runs once per chunk of work the thread pool hands out (~16 per launch at 2 threads).
void TileColPanel::transpose(std::ostringstream& s) const {
  const int64_t W = g_.lanes, mv = g_.cols / W * W;
  const bool f32 = p_.reduce->dtype == kFloat32;
  s << "        const int64_t kv = kc + (ke - kc) / " << W << " * " << W << ";\n";
  s << "        for (int64_t mb = " << g_.col_lo << "; mb < " << lesser(g_.col_hi, mv)
    << "; mb += " << W << ")\n";
  s << "        for (int64_t k = kc; k < kv; k += " << W << ") {\n";
  const std::string ind = "          ";
  for (size_t j = 0; j < p_.cols.size(); j++) {
    const Expr& e = *p_.cols[j];
    auto name = [&](int64_t stage, int64_t i) {
      return "t" + std::to_string(j) + "_" + std::to_string(stage) + "_" + std::to_string(i);
    };
    for (int64_t i = 0; i < W; i++) {
      std::vector<std::string> idx = base_;
      idx[p_.col] = "(mb + " + std::to_string(i) + ")";
      idx[p_.red] = "k";
      s << ind << "const " << VT_ << " " << name(0, i) << " = "
        << (f32 ? "ember_ldf(" : "ember_ldd(") << "b" << e.buf << " + "
        << ExprEmitter::index(e.view, idx) << ");\n";
    }
    int64_t stage = 0;
    for (int64_t bit = W / 2; bit >= 1; bit /= 2, stage++)
      for (int64_t i = 0; i < W; i++) {
        // Rows i and i ^ bit: row i keeps its lanes whose index has the bit equal to its own.
        const int64_t a = i & ~bit, b = i | bit;
        s << ind << "const " << VT_ << " " << name(stage + 1, i) << " = __builtin_shufflevector("
          << name(stage, a) << ", " << name(stage, b);
        for (int64_t l = 0; l < W; l++) {
          int64_t from;
          if (i & bit)
            from = (l & bit) ? W + l : l + bit;  // a's lane l + bit, or b's lane l
          else
            from = (l & bit) ? W + l - bit : l;  // a's lane l, or b's lane l - bit
          s << ", " << from;
        }
        s << ");\n";
      }
    for (int64_t i = 0; i < W; i++)
      s << ind << (f32 ? "ember_stf(" : "ember_std(") << "pk" << j << " + (k - kc + " << i << ") * "
        << g_.padded_cols << " + mb, " << name(stage, i) << ");\n";
  }
  s << "        }\n";
}

void TileColPanel::pack(std::ostringstream& s, ExprEmitter& em) const {
  // With the reduce in one block, a panel serves every unit of its batch index (and column
  // block) that the same call runs.
  const bool one_block = g_.block_k == g_.k;
  const std::string key =
      g_.col_blocks > 1 ? "bt * " + std::to_string(g_.col_blocks) + " + cb" : "bt";
  s << "      if (" << (one_block ? key + " != pk_t" : "1") << ") {\n";
  if (one_block) s << "        pk_t = " << key << ";\n";
  const int64_t M = g_.cols, W = g_.lanes;
  // Walk memory in order: k innermost when fewer loads gather along k than along the columns.
  bool k_inner = strided_loads(p_.cols, p_.col) > strided_loads(p_.cols, p_.red);
  std::string ind = "          ";
  std::vector<std::string> idx = base_;
  idx[p_.col] = "m";
  idx[p_.red] = "k";
  const std::string me = lesser(g_.col_hi, M);
  if (transposable()) {
    // The blocks in registers, then the rest element by element: the columns past the last
    // full vector, and k past the last full block.
    transpose(s);
    s << "        for (int64_t k = kc; k < ke; k++) {\n";
    s << ind << "for (int64_t m = k < kv ? " << greater(g_.col_lo, M / W * W) << " : " << g_.col_lo
      << "; m < " << me << "; m++) {\n";
  } else if (k_inner) {
    // A transposing copy: blocks of 16 columns keep both the source lines (reused across 16
    // consecutive k) and the destination line in L1, instead of one store stream per k.
    s << "        for (int64_t mb = " << g_.col_lo << "; mb < " << me << "; mb += 16)\n";
    s << "        for (int64_t k = kc; k < ke; k++) {\n";
    s << ind << "for (int64_t m = mb; m < (mb + 16 < " << me << " ? mb + 16 : " << me
      << "); m++) {\n";
  } else {
    s << "        for (int64_t k = kc; k < ke; k++) {\n";
    s << ind << "for (int64_t m = " << g_.col_lo << "; m < " << me << "; m++) {\n";
  }
  ExprEmitter::Memo memo;
  for (size_t j = 0; j < p_.cols.size(); j++) {
    std::string v = em.emit(*p_.cols[j], s, ind + "  ", memo, idx);
    s << ind << "  pk" << j << "[(k - kc) * " << g_.padded_cols << " + m] = " << v << ";\n";
  }
  s << ind << "}\n        }\n";
  if (g_.padded_cols > M) {
    s << "        for (int64_t k = kc; k < ke; k++)\n";
    s << "          for (int64_t m = " << greater(g_.col_lo, M) << "; m < " << g_.col_hi
      << "; m++) {\n";
    for (size_t j = 0; j < p_.cols.size(); j++)
      s << "            pk" << j << "[(k - kc) * " << g_.padded_cols << " + m] = 0;\n";
    s << "          }\n";
  }
  s << "      }\n";
}

}  // namespace ember::codegen
