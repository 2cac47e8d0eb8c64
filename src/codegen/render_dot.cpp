#include "codegen/render_dot.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "codegen/c_expr.h"

namespace ember::codegen {

using schedule::Expr;
using schedule::Kernel;

namespace {

// Output columns per epilogue pass. A column tile is a few columns wide; its sums wait in a local
// row of this many, so the epilogue (bias, tanh) runs as a loop along the row that vectorises.
constexpr int64_t kChunk = 128;

// A C expression and whether it is a vector along the reduce axis (else a scalar that the vector
// operations broadcast).
struct Val {
  std::string c;
  bool vec;
};

class DotRenderer : ProductRenderer {
 public:
  DotRenderer(const Kernel& k, const DotPlan& plan, const TileOperands& p)
      : ProductRenderer(k, p), k_(k), p_(p) {
    TN_ = plan.tile_rows;
    TC_ = plan.tile_cols;
    W_ = plan.lanes;
    NC_ = plan.block_rows;
    MB_ = plan.block_cols ? plan.block_cols : M_;
    CB_ = (std::min(MB_, kChunk) + TC_ - 1) / TC_ * TC_;
    hold_ = plan.hold;
  }

  std::string render(const std::string& fn) {
    std::ostringstream s;
    render_kernel_head(s, fn, k_, VT_, W_ * (f32_ ? 4 : 8), "dot");
    int64_t nb = (N_ + NC_ - 1) / NC_;
    s << "  for (int64_t o = start; o < end; o++) {\n";
    render_unit(s, nb);
    render_batch_index(s, k_, p_);
    s << "    const int64_t n_lo = rb * " << NC_ << ", n_hi = n_lo + " << NC_ << " < " << N_
      << " ? n_lo + " << NC_ << " : " << N_ << ";\n";
    s << "    for (int64_t n0 = n_lo; n0 < n_hi; n0 += " << TN_ << ") {\n";
    for (int64_t i = 0; i < TN_; i++)
      s << "      const int64_t r" << i << " = n0 + " << i << " < n_hi ? n0 + " << i
        << " : n_hi - 1;\n";
    const std::string lo = MB_ < M_ ? "m_lo" : "0", hi = MB_ < M_ ? "m_hi" : std::to_string(M_);
    s << "      for (int64_t m0 = " << lo << "; m0 < " << hi << "; m0 += " << CB_ << ") {\n";
    s << "        " << T_ << " tl[" << TN_ * CB_ << "] __attribute__((aligned(64)));\n";
    s << "        const int64_t mv = " << hi << " - m0 < " << CB_ << " ? " << hi
      << " - m0 : " << CB_ << ";\n";
    s << "        for (int64_t mc = m0; mc < m0 + mv; mc += " << TC_ << ") {\n";
    std::string ind = "          ";
    for (int64_t j = 0; j < TC_; j++)
      s << ind << "const int64_t c" << j << " = mc + " << j << " < " << M_ << " ? mc + " << j
        << " : " << M_ - 1 << ";\n";
    render_sums(s, ind);
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t j = 0; j < TC_; j++)
        s << ind << "tl[" << i * CB_ << " + (mc - m0) + " << j << "] = " << sum(i, j) << ";\n";
    s << "        }\n";
    render_epilogue(s, "        ");
    s << "      }\n    }\n  }\n}\n";
    return s.str();
  }

 private:
  // The unit `o`'s row block rb and batch index bt; with column blocks (the innermost), its
  // columns [m_lo, m_hi) too.
  void render_unit(std::ostringstream& s, int64_t nb) {
    if (MB_ == M_) {
      s << "    const int64_t rb = o % " << nb << ", bt = o / " << nb << ";\n";
      return;
    }
    const int64_t ncb = (M_ + MB_ - 1) / MB_;
    s << "    const int64_t cb = o % " << ncb << ", rb = o / " << ncb << " % " << nb
      << ", bt = o / " << ncb * nb << ";\n";
    s << "    const int64_t m_lo = cb * " << MB_ << ", m_hi = m_lo + " << MB_ << " < " << M_
      << " ? m_lo + " << MB_ << " : " << M_ << ";\n";
  }

  std::string acc(int64_t i, int64_t j) {
    return "a" + std::to_string(i) + "_" + std::to_string(j);
  }
  std::string sum(int64_t i, int64_t j) {
    return "s" + std::to_string(i) + "_" + std::to_string(j);
  }

  std::vector<std::string> index(int64_t i, int64_t j, const std::string& k) {
    std::vector<std::string> idx = base_;
    idx[p_.row] = i < 0 ? "r0" : "r" + std::to_string(i);
    idx[p_.col] = j < 0 ? "c0" : "c" + std::to_string(j);
    idx[p_.red] = k;
    return idx;
  }

  // e's value for k .. k + W - 1 as a vector (or a scalar constant along k). With `map`, the row
  // and column operands are the variables the k loop defined for tile row i and column j.
  Val vec(const Expr& e, int64_t i, int64_t j, bool map) {
    if (map) {
      auto r = std::find(p_.rows.begin(), p_.rows.end(), &e);
      if (r != p_.rows.end()) return named_rows_[r - p_.rows.begin()][i];
      auto c = std::find(p_.cols.begin(), p_.cols.end(), &e);
      if (c != p_.cols.end()) return named_cols_[c - p_.cols.begin()][j];
    }
    switch (e.kind) {
      case Expr::Kind::Load: {
        std::string addr =
            "b" + std::to_string(e.buf) + " + " + ExprEmitter::index(e.view, index(i, j, "k"));
        if (e.view.shape[p_.red] > 1 && e.view.strides[p_.red] == 1)
          return {std::string(f32_ ? "ember_ldf(" : "ember_ldd(") + addr + ")", true};
        return {"*(" + addr + ")", false};
      }
      case Expr::Kind::Const:
        return {literal(e.value, e.dtype), false};
      default:
        break;
    }
    std::vector<std::string> a;
    bool v = false;
    for (auto& src : e.src) {
      Val x = vec(*src, i, j, map);
      a.push_back(x.c);
      v |= x.vec;
    }
    return {render_template(ir::op_info(e.op).c_float, e.dtype, a), v};
  }

  // One vector step of the k loop: the row operands of each tile row, the column operands of each
  // tile column, then every accumulator.
  void render_step(std::ostringstream& s, const std::string& ind) {
    named_rows_.assign(p_.rows.size(), {});
    named_cols_.assign(p_.cols.size(), {});
    auto define = [&](const Expr& e, int64_t i, int64_t j, const std::string& name) {
      Val v = vec(e, i, j, false);
      const bool hold = hold_ && v.vec;
      s << ind << (hold ? "" : "const ") << (v.vec ? VT_ : T_) << " " << name << " = " << v.c << ";"
        << (hold ? " __asm__(\"\" : \"+v\"(" + name + "));" : "") << "\n";
      return Val{name, v.vec};
    };
    for (size_t t = 0; t < p_.cols.size(); t++)
      for (int64_t j = 0; j < TC_; j++)
        named_cols_[t].push_back(
            define(*p_.cols[t], -1, j, "q" + std::to_string(t) + "_" + std::to_string(j)));
    for (size_t t = 0; t < p_.rows.size(); t++)
      for (int64_t i = 0; i < TN_; i++)
        named_rows_[t].push_back(
            define(*p_.rows[t], i, -1, "p" + std::to_string(t) + "_" + std::to_string(i)));
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t j = 0; j < TC_; j++)
        s << ind << acc(i, j) << " += " << vec(*p_.reduce->src[0], i, j, true).c << ";\n";
  }

  // Sums the lanes of the accumulators into s{i}_{j}: per group of W accumulators a tree of
  // pairwise half-folds (two shuffles and an add per pair), which leaves the group's W sums in
  // one vector, in order. A fixed tree, so the result does not depend on anything but the data.
  void render_lane_sums(std::ostringstream& s, const std::string& ind, bool add) {
    std::vector<std::string> accs;
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t j = 0; j < TC_; j++) accs.push_back(acc(i, j));
    auto out = [&](size_t a, const std::string& v) {
      const std::string& name = sum(static_cast<int64_t>(a) / TC_, static_cast<int64_t>(a) % TC_);
      s << ind << name << (add ? " += " : " = ") << v << ";\n";
    };
    if (W_ == 1) {
      for (size_t a = 0; a < accs.size(); a++) out(a, accs[a]);
      return;
    }
    bool zero = false;
    for (size_t g0 = 0; g0 < accs.size(); g0 += W_) {
      std::vector<std::string> v(accs.begin() + g0,
                                 accs.begin() + std::min<size_t>(g0 + W_, accs.size()));
      v.resize(W_);  // "" is a zero vector
      for (int64_t g = W_; g > 1; g /= 2) {
        std::vector<std::string> next;
        for (size_t q = 0; q < v.size(); q += 2) {
          if (v[q].empty() && v[q + 1].empty()) {
            next.push_back("");
            continue;
          }
          std::string lo, hi;
          for (int64_t l = 0; l < W_; l++) {
            int64_t half = l < W_ / 2 ? 0 : W_, lp = l % (W_ / 2);
            int64_t from = half + lp / (g / 2) * g + lp % (g / 2);
            lo += ", " + std::to_string(from);
            hi += ", " + std::to_string(from + g / 2);
          }
          std::string a = v[q].empty() ? "hz" : v[q], b = v[q + 1].empty() ? "hz" : v[q + 1];
          zero |= v[q].empty() || v[q + 1].empty();
          std::string name = "h" + std::to_string(hn_++);
          s << ind << "const " << VT_ << " " << name << " = __builtin_shufflevector(" << a << ", "
            << b << lo << ") + __builtin_shufflevector(" << a << ", " << b << hi << ");\n";
          next.push_back(name);
        }
        v = next;
      }
      for (size_t a = g0; a < std::min<size_t>(g0 + W_, accs.size()); a++)
        out(a, v[0] + "[" + std::to_string(a - g0) + "]");
    }
    if (zero) zero_needed_ = true;
  }

  // The sums of the tile: vector steps along k (in blocks of kSumBlock steps per lane, whose lane
  // sums add up in order), then the k % W last terms one by one.
  void render_sums(std::ostringstream& s, const std::string& ind) {
    int64_t kv = K_ / W_ * W_, kb = kSumBlock * W_;
    std::string in = ind + "  ";
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t j = 0; j < TC_; j++) s << ind << T_ << " " << sum(i, j) << " = 0;\n";
    if (kv > 0) {
      std::string lo = "0", hi = std::to_string(kv);
      if (kv > kb) {
        s << ind << "for (int64_t kb = 0; kb < " << kv << "; kb += " << kb << ") {\n";
        lo = "kb", hi = "(kb + " + std::to_string(kb) + " < " + std::to_string(kv) + " ? kb + " +
                        std::to_string(kb) + " : " + std::to_string(kv) + ")";
      } else {
        s << ind << "{\n";
      }
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t j = 0; j < TC_; j++) s << in << VT_ << " " << acc(i, j) << " = {0};\n";
      s << in << "for (int64_t k = " << lo << "; k < " << hi << "; k += " << W_ << ") {\n";
      render_step(s, in + "  ");
      s << in << "}\n";
      std::ostringstream sums;
      render_lane_sums(sums, in, true);
      if (zero_needed_) s << in << "const " << VT_ << " hz = {0};\n";
      s << sums.str() << ind << "}\n";
    }
    if (kv < K_) {
      // The last terms, one by one, after the vector steps' sums.
      s << ind << "for (int64_t k = " << kv << "; k < " << K_ << "; k++) {\n";
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t j = 0; j < TC_; j++) {
          ExprEmitter::Memo memo;
          std::string v = em_.emit(*p_.reduce->src[0], s, in, memo, index(i, j, "k"));
          s << in << sum(i, j) << " += " << v << ";\n";
        }
      s << ind << "}\n";
    }
  }

  // The sums of the chunk -> the elementwise ops after the reduce -> the output, along each row.
  void render_epilogue(std::ostringstream& s, const std::string& ind) {
    render_scalar_store(s, ind, k_, p_, em_, base_, T_, TN_, CB_);
  }

  const Kernel& k_;
  const TileOperands& p_;
  int64_t TN_, TC_, W_, NC_, MB_, CB_;  // MB_: columns per unit (block_cols, else all)
  bool zero_needed_ = false;
  bool hold_ = false;  // Hold: the step's operand vectors bound to registers
  int hn_ = 0;
  std::vector<std::vector<Val>> named_rows_, named_cols_;
  ExprEmitter em_;
};

}  // namespace

std::string render_dot(const Kernel& k, const DotPlan& d, const TileOperands& p,
                       const std::string& fn) {
  return DotRenderer(k, d, p).render(fn);
}

}  // namespace ember::codegen
