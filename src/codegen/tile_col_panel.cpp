// The tiled reduce's column-operand panels (TileColPanel in render_tile.h): Pack on the column
// axis.
#include <algorithm>
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Expr;

bool col_panel_per_tile(const TileOperands& p, bool pack_cols, bool cols_outer) {
  return pack_cols && cols_outer && p.direct;
}

// A panel that serves later units: the reduce in one block, or the whole range in blocks.
bool TileColPanel::reused() const { return !g_.per_tile && (g_.block_k == g_.k || g_.blocks > 1); }

// The panel of column operand j for the current reduce block: with the whole range, its block's
// part (pkb{j}, pack).
std::string TileColPanel::name(size_t j) const {
  return (g_.blocks > 1 ? "pkb" : "pk") + std::to_string(j);
}

void TileColPanel::declare(std::ostringstream& s) const {
  const int64_t cols = g_.per_tile ? g_.tile_cols : g_.padded_cols;
  // A shared panel: the call's own (pkl{j}) serves only where another unit is packing the
  // launch's; pk{j} points at the one in use.
  const std::string own = g_.shared.empty() ? "pk" : "pkl";
  for (size_t j = 0; j < p_.cols.size(); j++)
    s << "  " << T_ << " " << own << j << "[" << g_.block_k * g_.blocks * cols
      << "] __attribute__((aligned(64)));\n";
  if (reused()) s << "  int64_t pk_t = -1;\n";
  if (g_.shared.empty()) return;
  s << "  int64_t* pk_st = (int64_t*)" << g_.shared << ";\n";
  for (size_t j = 0; j < p_.cols.size(); j++)
    s << "  " << T_ << "* pk" << j << " = pkl" << j << ";\n";
}

// The panel's offset of column m's tile plus m's place in it (m a variable of the generated code):
// the tile's [block_k][TM] block, at (tile - the panel's first tile) * block_k * TM.
std::string TileColPanel::column(const std::string& m) const {
  const std::string tm = std::to_string(g_.tile_cols);
  if (g_.per_tile) return "(" + m + " - m0)";
  return "(" + m + " / " + tm + " * " + std::to_string(g_.tile_cols * g_.block_k) + " + " + m +
         " % " + tm + ")";
}

// Column m's element of the panel at k (both variables of the generated code). With the whole
// range, the panel of k's reduce block first.
std::string TileColPanel::at(const std::string& m, const std::string& k) const {
  const std::string tm = std::to_string(g_.tile_cols), kc = std::to_string(g_.block_k);
  if (g_.blocks == 1) return column(m) + " + (" + k + " - kc) * " + tm;
  const std::string r = "(" + k + " - " + g_.k_lo + ")";
  return r + " / " + kc + " * " + std::to_string(g_.block_k * g_.padded_cols) + " + " + column(m) +
         " + " + r + " % " + kc + " * " + tm;
}

// The reduce range that a pack fills: the unit's whole range, or the block.
std::string TileColPanel::k_from() const { return g_.blocks > 1 ? g_.k_lo : "kc"; }
std::string TileColPanel::k_to() const { return g_.blocks > 1 ? g_.k_hi : "ke"; }

std::string TileColPanel::load(size_t j, int64_t v) const {
  const std::string tile = g_.per_tile ? "" : "m0 * " + std::to_string(g_.block_k) + " + ";
  return name(j) + " + " + tile + "(k - kc) * " + std::to_string(g_.tile_cols) + " + " +
         std::to_string(v * g_.lanes);
}

// min / max of a bound of the unit's columns (a number, or a variable with column blocks) and a
// number, as code.
std::string TileColPanel::lesser(const std::string& a, int64_t b) const {
  if (g_.col_blocks == 1 && !g_.per_tile)
    return std::to_string(std::min<int64_t>(std::stoll(a), b));
  return "(" + a + " < " + std::to_string(b) + " ? " + a + " : " + std::to_string(b) + ")";
}
std::string TileColPanel::greater(const std::string& a, int64_t b) const {
  if (g_.col_blocks == 1 && !g_.per_tile)
    return std::to_string(std::max<int64_t>(std::stoll(a), b));
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

// The panel's full W x W blocks of [kc, ke) x the unit's columns below
// M: W vector loads along k (one per column m), log2(W) rounds of two-source shuffles that each
// swap one bit of the row index with the same bit of the lane index, W vector stores along m. 9
// us per pack of a 128 x 128 float W^T became ~2 us at AVX-512 (the element-wise loop gathers):
// the pack runs once per chunk of work the thread pool hands out (~16 per launch at 2 threads).
void TileColPanel::transpose(std::ostringstream& s) const {
  const int64_t W = g_.lanes, mv = g_.cols / W * W;
  const bool f32 = p_.reduce->dtype == kFloat32;
  s << "        const int64_t kv = " << k_from() << " + (" << k_to() << " - " << k_from() << ") / "
    << W << " * " << W << ";\n";
  s << "        for (int64_t mb = " << lo() << "; mb < " << lesser(hi(), mv) << "; mb += " << W
    << ")\n";
  s << "        for (int64_t k = " << k_from() << "; k < kv; k += " << W << ") {\n";
  const std::string ind = "          ";
  for (size_t j = 0; j < p_.cols.size(); j++) {
    const Expr& e = *p_.cols[j];
    auto reg = [&](int64_t stage, int64_t i) {
      return "t" + std::to_string(j) + "_" + std::to_string(stage) + "_" + std::to_string(i);
    };
    for (int64_t i = 0; i < W; i++) {
      std::vector<std::string> idx = base_;
      idx[p_.col] = "(mb + " + std::to_string(i) + ")";
      idx[p_.red] = "k";
      s << ind << "const " << VT_ << " " << reg(0, i) << " = "
        << (f32 ? "ember_ldf(" : "ember_ldd(") << "b" << e.buf << " + "
        << ExprEmitter::index(e.view, idx) << ");\n";
    }
    int64_t stage = 0;
    for (int64_t bit = W / 2; bit >= 1; bit /= 2, stage++)
      for (int64_t i = 0; i < W; i++) {
        // Rows i and i ^ bit: row i keeps its lanes whose index has the bit equal to its own.
        const int64_t a = i & ~bit, b = i | bit;
        s << ind << "const " << VT_ << " " << reg(stage + 1, i) << " = __builtin_shufflevector("
          << reg(stage, a) << ", " << reg(stage, b);
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
      s << ind << (f32 ? "ember_stf(" : "ember_std(") << "pk" << j << " + "
        << at("mb", "(k + " + std::to_string(i) + ")") << ", " << reg(stage, i) << ");\n";
  }
  s << "        }\n";
}

std::string TileColPanel::lo() const { return g_.per_tile ? "m0" : g_.col_lo; }
std::string TileColPanel::hi() const {
  return g_.per_tile ? "(m0 + " + std::to_string(g_.tile_cols) + ")" : g_.col_hi;
}

void TileColPanel::pack(std::ostringstream& s, ExprEmitter& em) const {
  if (g_.per_tile) return;
  // A reused panel serves every unit of its key (batch index, column block, slice) that the same
  // call runs one after another; the whole range's first block decides for the unit's blocks.
  if (g_.blocks > 1) {
    // Row by row along the whole range (a long run of each row of a weight read along k, which
    // the hardware prefetcher follows) rather than a block at a time.
    s << "      if (kc == " << g_.k_lo << " && " << g_.key << " != pk_t) {\n";
    s << "        pk_t = " << g_.key << ";\n";
  } else {
    s << "      if (" << (reused() ? g_.key + " != pk_t" : "1") << ") {\n";
    if (reused()) s << "        pk_t = " << g_.key << ";\n";
  }
  if (g_.shared.empty())
    fill(s, em);
  else
    fill_shared(s, em);
  s << "      }\n";
  if (g_.blocks > 1)  // after the pack, which may point pk{j} at the launch's panel
    for (size_t j = 0; j < p_.cols.size(); j++)
      s << "      " << T_ << "* " << name(j) << " = pk" << j << " + (kc - " << g_.k_lo << ") * "
        << g_.padded_cols << ";\n";
}

// The launch's panel (col_panel_shared) where packed; else packed by this unit, into the launch's
// panel where no other unit has begun it (then marked packed), or into the call's own.
void TileColPanel::fill_shared(std::ostringstream& s, ExprEmitter& em) const {
  const int64_t elems = g_.block_k * g_.blocks * g_.padded_cols;
  auto point = [&](const std::string& own) {
    for (size_t j = 0; j < p_.cols.size(); j++) {
      const std::string launch =
          "(" + std::string(T_) + "*)(pk_st + 8) + " + std::to_string(j * elems);
      s << "          pk" << j << " = "
        << (own.empty() ? launch : own + " ? " + launch + " : pkl" + std::to_string(j)) << ";\n";
    }
  };
  s << "        if (__atomic_load_n(pk_st, __ATOMIC_ACQUIRE) == 2) {\n";
  point("");
  s << "        } else {\n";
  s << "          int64_t idle_ = 0;\n";
  s << "          const int mine_ = __atomic_compare_exchange_n(pk_st, &idle_, 1, 0, "
       "__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);\n";
  point("mine_");
  fill(s, em);
  s << "          if (mine_) __atomic_store_n(pk_st, 2, __ATOMIC_RELEASE);\n";
  s << "        }\n";
}

void TileColPanel::pack_tile(std::ostringstream& s, ExprEmitter& em) const {
  if (!g_.per_tile) return;
  s << "        {\n";
  fill(s, em);
  s << "        }\n";
}

// The panel's columns [lo, hi) for k in [kc, ke): its tiles' [k][TM] blocks, each written along
// its columns (contiguous), zero past the last column.
void TileColPanel::fill(std::ostringstream& s, ExprEmitter& em) const {
  const int64_t M = g_.cols, W = g_.lanes, TM = g_.tile_cols;
  // Walk memory in order: k innermost when fewer loads gather along k than along the columns.
  bool k_inner = strided_loads(p_.cols, p_.col) > strided_loads(p_.cols, p_.red);
  std::string ind = "          ";
  std::vector<std::string> idx = base_;
  idx[p_.col] = "m";
  idx[p_.red] = "k";
  const std::string me = lesser(hi(), M);
  const std::string tiles =
      "for (int64_t mb = " + lo() + "; mb < " + me + "; mb += " + std::to_string(TM) + ")\n";
  std::string dst;  // column m's element of the panel at k
  const std::string k_loop = "for (int64_t k = " + k_from() + "; k < " + k_to() + "; k++)";
  if (transposable()) {
    // The blocks in registers, then the rest element by element: the columns past the last
    // full vector, and k past the last full block.
    transpose(s);
    s << "        for (int64_t k = " << k_from() << "; k < " << k_to() << "; k++) {\n";
    s << ind << "for (int64_t m = k < kv ? " << greater(lo(), M / W * W) << " : " << lo()
      << "; m < " << me << "; m++) {\n";
    dst = at("m", "k");
  } else if (g_.per_tile) {
    // One tile: whole (a constant trip count, which GCC turns into vector copies) unless the
    // columns end inside it.
    const std::string end = M % TM == 0 ? "m0 + " + std::to_string(TM)
                                        : "(m0 + " + std::to_string(TM) + " < " +
                                              std::to_string(M) + " ? m0 + " + std::to_string(TM) +
                                              " : " + std::to_string(M) + ")";
    s << "        for (int64_t k = kc; k < ke; k++) {\n";
    s << ind << "for (int64_t m = m0; m < " << end << "; m++) {\n";
    dst = at("m", "k");
  } else {
    // Tile by tile, each tile's row at k written along its columns: with k innermost (a
    // transposing copy), the source lines of the tile's columns stay in L1 across consecutive k
    // and the destination is one contiguous stream.
    if (k_inner)
      s << "        " << tiles << "        " << k_loop << " {\n";
    else
      s << "        " << k_loop << "\n        " << tiles << "        {\n";
    s << ind << "for (int64_t m = mb; m < (mb + " << TM << " < " << me << " ? mb + " << TM << " : "
      << me << "); m++) {\n";
    dst = at("mb", "k") + " + (m - mb)";
  }
  ExprEmitter::Memo memo;
  for (size_t j = 0; j < p_.cols.size(); j++) {
    std::string v = em.emit(*p_.cols[j], s, ind + "  ", memo, idx);
    s << ind << "  pk" << j << "[" << dst << "] = " << v << ";\n";
  }
  s << ind << "}\n        }\n";
  if (g_.padded_cols > M) {
    s << "        " << k_loop << "\n";
    s << "          for (int64_t m = " << greater(lo(), M) << "; m < " << hi() << "; m++) {\n";
    for (size_t j = 0; j < p_.cols.size(); j++)
      s << "            pk" << j << "[" << at("m", "k") << "] = 0;\n";
    s << "          }\n";
  }
}

}  // namespace ember::codegen
