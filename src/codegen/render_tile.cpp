#include "codegen/render_tile.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "codegen/c_expr.h"
#include "ember/error.h"

namespace ember::codegen {

using schedule::Expr;
using schedule::Kernel;

namespace {

class TileRenderer : ProductRenderer {
 public:
  TileRenderer(const Kernel& k, const TilePlan& t, const TileOperands& p)
      : ProductRenderer(k, p), k_(k), t_(t), p_(p) {
    TN_ = t.tile_rows;
    TM_ = t.tile_cols;
    W_ = t.lanes;
    KC_ = t.block_k ? t.block_k : K_;
    NC_ = t.block_rows;
    cols_outer_ = t.cols_outer;
    hold_ = t.hold;
    KS_ = t.split_k ? t.split_k : K_;
    S_ = (K_ + KS_ - 1) / KS_;
    klo_ = S_ > 1 ? "k_lo" : "0";
    khi_ = S_ > 1 ? "k_hi" : std::to_string(K_);
    pack_ = t.pack_cols;
    pack_rows_ = t.row_panel != RowPanel::None;
    const bool bcast = t.row_panel == RowPanel::Broadcast;
    MPAD_ = (M_ + TM_ - 1) / TM_ * TM_;
    MB_ = t.block_cols ? t.block_cols : MPAD_;
    NCB_ = (MPAD_ + MB_ - 1) / MB_;
    mlo_ = NCB_ > 1 ? "m_lo" : "0";
    mhi_ = NCB_ > 1 ? "m_hi" : std::to_string(MPAD_);
    // The broadcast panel per row tile where the rows are outside and read along k; else per
    // block, packed in the operand's memory order (a transposed operand: a row tile's rows at one
    // k share lines).
    const bool kmajor = tile_rows_kmajor(p);
    panel_.emplace(
        k, p, base_, T_, VT_,
        TileRowPanel::Shape{TN_, NC_, KC_, W_, kmajor, bcast, bcast && !cols_outer_ && !kmajor});
    per_tile_ = bcast && !cols_outer_ && !kmajor;
    col_tile_ = col_panel_per_tile(p, pack_, cols_outer_);
    whole_ = col_panel_whole_range(k, t, p);
    // The panel's key: the units that may share it (batch index, column block, slice).
    std::string key = NCB_ > 1 ? "bt * " + std::to_string(NCB_) + " + cb" : "bt";
    if (whole_ && S_ > 1) key = "bt * " + std::to_string(S_) + " + sl";
    const int64_t blocks = whole_ ? ((K_ + S_ - 1) / S_ + KC_ - 1) / KC_ : 1;  // longest slice
    TileColPanel::Shape cg{M_,   MPAD_, KC_,       K_,     W_,   NCB_, TM_,
                           mlo_, mhi_,  col_tile_, blocks, klo_, khi_, key};
    if (const int64_t shared = col_panel_shared(k, t, p)) {
      if (shared != KC_ * blocks * MPAD_)
        throw Error("internal error: kernel " + k.name() + ": a shared column panel of " +
                    std::to_string(shared) + " elements, rendered as " +
                    std::to_string(KC_ * blocks * MPAD_));
      cg.shared = "bufs[" + std::to_string(k.buffers.size() + 1) + "]";  // after the row count
    }
    cpanel_.emplace(p, base_, T_, VT_, cg);
  }

  std::string render(const std::string& fn) {
    std::ostringstream s;
    render_kernel_head(s, fn, k_, VT_, W_ * (f32_ ? 4 : 8), "tile");
    if (pack_) cpanel_->declare(s);
    if (KC_ < K_ && S_ == 1)
      s << "  " << T_ << " cacc[" << NC_ * MPAD_ << "] __attribute__((aligned(64)));\n";
    TileRowSums sums(k_, p_, base_, T_, NC_, S_, (N_ + TN_ - 1) / TN_ * TN_, MPAD_, kSumBlock, VT_,
                     W_);
    sums.declare(s);
    if (pack_rows_) panel_->declare(s);
    // With the row count read at run time (KernelPlan::runtime_rows), the code names no row
    // count: the unit of work is the row block and there is one batch.
    const bool rt_rows = KernelPlan{t_}.runtime_rows(k_) >= 0;
    if (rt_rows)
      s << "  const int64_t nrows = *(const int64_t*)bufs[" << k_.buffers.size() << "];\n";
    if (S_ > 1) {
      // Scratch (KernelPlan::scratch): one completion counter per row block, then the partial
      // tiles, [batch][slice][row][MPAD].
      s << "  int64_t* restrict cnt = (int64_t*)bufs[" << k_.buffers.size() << "];\n";
      s << "  " << T_ << "* restrict part = (" << T_ << "*)((char*)cnt + " << counter_bytes()
        << ");\n";
    }
    s << "  for (int64_t o = start; o < end; o++) {\n";
    render_unit(s, rt_rows);
    sums.zero(s);
    render_blocks(s, sums);
    sums.store(s);
    if (S_ > 1) render_split_finish(s, sums);
    s << "  }\n}\n";
    return s.str();
  }

 private:
  // The unit of work `o`'s batch index, row block (n_lo, n_hi), and split-K slice (k_lo, k_hi)
  // or column block (m_lo, m_hi).
  void render_unit(std::ostringstream& s, bool rt_rows) {
    const int64_t nb = (N_ + NC_ - 1) / NC_;
    if (S_ > 1 && whole_) {
      // Row blocks innermost: consecutive units share their slice's column panel.
      s << "    const int64_t rb = o % " << nb << ", sl = o / " << nb << " % " << S_
        << ", bt = o / " << S_ * nb << ";\n";
    } else if (S_ > 1) {
      s << "    const int64_t sl = o % " << S_ << ", rb = o / " << S_ << " % " << nb
        << ", bt = o / " << S_ * nb << ";\n";
    }
    if (S_ > 1) {
      // Slices of equal depth (within one index), so the threads get equal shares: 10,000 in
      // slices of 1280 left 1040 to the last, and at 2 threads one took 5120, the other 4880.
      s << "    const int64_t k_lo = sl * " << K_ << " / " << S_ << ", k_hi = (sl + 1) * " << K_
        << " / " << S_ << ";\n";
    } else if (rt_rows) {
      s << "    const int64_t rb = o, bt = 0;\n";
    } else if (NCB_ > 1) {
      // Column blocks innermost: a unit's columns and their panel, then the next row block.
      s << "    const int64_t cb = o % " << NCB_ << ", rb = o / " << NCB_ << " % " << nb
        << ", bt = o / " << NCB_ * nb << ";\n";
      s << "    const int64_t m_lo = cb * " << MB_ << ", m_hi = m_lo + " << MB_ << " < " << MPAD_
        << " ? m_lo + " << MB_ << " : " << MPAD_ << ";\n";
    } else {
      s << "    const int64_t rb = o % " << nb << ", bt = o / " << nb << ";\n";
    }
    render_batch_index(s, k_, p_);
    const std::string n_rows = rt_rows ? "nrows" : std::to_string(N_);
    s << "    const int64_t n_lo = rb * " << NC_ << ", n_hi = n_lo + " << NC_ << " < " << n_rows
      << " ? n_lo + " << NC_ << " : " << n_rows << ";\n";
  }

  // The unit's reduce blocks: the panels and row sums of each, then its row and column tiles.
  void render_blocks(std::ostringstream& s, const TileRowSums& sums) {
    s << "    for (int64_t kc = " << klo_ << "; kc < " << khi_ << "; kc += " << KC_ << ") {\n";
    s << "      const int64_t ke = kc + " << KC_ << " < " << khi_ << " ? kc + " << KC_ << " : "
      << khi_ << ";\n";
    // A row tile's broadcast panel is packed from the row operand in place: its next tile's rows
    // are prefetched as if read in place (SSE2, kernel CPU time, 1 thread, paired: x W^T
    // 0.87-0.89x, (10000x128)@(128x128) 0.95-0.97x, tanh(x W^T + b) 0.94-0.96x, the first
    // layer's (K = 8) 1.01x).
    TilePrefetch pf(k_, p_, base_,
                    {TN_, TM_, KC_, K_, S_, khi_, pack_, pack_rows_ && !per_tile_, cols_outer_,
                     mlo_, col_tile_, mhi_, whole_, NC_});
    pf_ = &pf;
    pf.blocks(s);
    if (pack_) cpanel_->pack(s, em_);
    if (pack_rows_) panel_->pack(s, em_);
    sums.accumulate(s, em_);
    std::string rows = "for (int64_t n0 = n_lo; n0 < n_hi; n0 += " + std::to_string(TN_) + ") {\n";
    std::string cols =
        "for (int64_t m0 = " + mlo_ + "; m0 < " + mhi_ + "; m0 += " + std::to_string(TM_) + ") {\n";
    if (cols_outer_) {
      s << "      " << cols;
      if (col_tile_) cpanel_->pack_tile(s, em_);
      s << "        " << rows;
    } else {
      s << "      " << rows;
      if (per_tile_) panel_->pack_tile(s, em_);
      s << "        " << cols;
    }
    for (int64_t i = 0; i < TN_; i++)
      s << "          const int64_t r" << i << " = n0 + " << i << " < n_hi ? n0 + " << i
        << " : n_hi - 1;\n";
    pf.tile(s, "          ");
    render_micro(s, "          ");
    s << "        }\n      }\n    }\n";
    pf_ = nullptr;
  }

  std::string vload(const std::string& addr) {
    return std::string(f32_ ? "ember_ldf(" : "ember_ldd(") + addr + ")";
  }
  std::string vstore(const std::string& addr, const std::string& v) {
    return std::string(f32_ ? "ember_stf(" : "ember_std(") + addr + ", " + v + ");";
  }
  std::string acc(int64_t i, int64_t v) {
    return "c" + std::to_string(i) + "_" + std::to_string(v);
  }

  // The vector form of a both-varying term for tile row i, vector v.
  std::string vexpr(const Expr& e, int64_t i, int64_t v) {
    auto c = std::find(p_.cols.begin(), p_.cols.end(), &e);
    if (c != p_.cols.end())
      return "q" + std::to_string(c - p_.cols.begin()) + "_" + std::to_string(v);
    if (!(deps_(e) & (uint64_t{1} << p_.col))) return scal_.at({&e, i});
    std::vector<std::string> a;
    for (auto& s : e.src) a.push_back(vexpr(*s, i, v));
    return render_template(ir::op_info(e.op).c_float, e.dtype, a);
  }

  // Row-only operands of the both-varying part, emitted as scalars for tile row i.
  void emit_scalars(const Expr& e, int64_t i, std::ostringstream& s, const std::string& ind,
                    ExprEmitter::Memo& memo, const std::vector<std::string>& idx) {
    if (std::find(p_.cols.begin(), p_.cols.end(), &e) != p_.cols.end()) return;
    if (!(deps_(e) & (uint64_t{1} << p_.col))) {
      if (scal_.count({&e, i})) return;  // a shared subterm
      auto r = std::find(p_.rows.begin(), p_.rows.end(), &e);
      if (pack_rows_ && r != p_.rows.end()) {
        const size_t j = static_cast<size_t>(r - p_.rows.begin());
        s << ind << panel_->load(j, i);
        scal_[{&e, i}] = "a" + std::to_string(j) + "_" + std::to_string(i);
      } else {
        scal_[{&e, i}] = em_.emit(e, s, ind, memo, idx);
      }
      return;
    }
    for (auto& src : e.src) emit_scalars(*src, i, s, ind, memo, idx);
  }

  // A tile's vectors in a [row][MPAD_] array, from the pointer `at` to its first element.
  std::string tile_addr(const std::string& at, int64_t i, int64_t v) {
    return at + " + " + std::to_string(i * MPAD_ + v * W_);
  }
  std::string tot_addr(int64_t i, int64_t v) { return "tot + " + std::to_string(i * TM_ + v * W_); }

  // Accumulation along k is blocked (Tensor::sum's bound): the accumulators sum at most
  // kSumBlock consecutive terms from zero; the block partials are added in order into a local tile
  // (within a cache block) and into cacc (across cache blocks). Error to first order
  // (kSumBlock + ceil(K / kSumBlock)) u sum |a_ik b_kj| instead of K u sum |a_ik b_kj|, at the
  // cost of a tile load and store per block. Under SplitReduce, each slice sums its own blocks
  // this way from zero and the finishing unit adds the slices' partials in slice order.
  void render_micro(std::ostringstream& s, const std::string& ind) {
    int64_t nv = TM_ / W_;
    const bool blocked = std::min(KC_, K_) > kSumBlock;
    std::string in = ind + "  ";
    if (blocked) {
      s << ind << T_ << " tot[" << TN_ * TM_ << "] __attribute__((aligned(64)));\n";
      s << ind << "for (int64_t kb = kc; kb < ke; kb += " << kSumBlock << ") {\n";
      s << in << "const int64_t kbe = kb + " << kSumBlock << " < ke ? kb + " << kSumBlock
        << " : ke;\n";
      render_k_loop(s, in, "kb", "kbe");
      s << in << "if (kb == kc) {\n";
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t v = 0; v < nv; v++)
          s << in << "  " << vstore(tot_addr(i, v), acc(i, v)) << "\n";
      s << in << "} else {\n";
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t v = 0; v < nv; v++)
          s << in << "  " << vstore(tot_addr(i, v), vload(tot_addr(i, v)) + " + " + acc(i, v))
            << "\n";
      s << in << "}\n";
      s << ind << "}\n";
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t v = 0; v < nv; v++)
          s << ind << VT_ << " " << acc(i, v) << " = " << vload(tot_addr(i, v)) << ";\n";
    } else {
      render_k_loop(s, ind, "kc", "ke");
    }
    if (S_ > 1) {
      // The slice's partial tile (its rows in the block) is its running total across cache
      // blocks, in scratch; the epilogue waits for the sum of all slices.
      // Rows past n_hi (a clamped last tile) land in the padding rows.
      s << ind << T_ << "* ps = " << part_tile("sl") << ";\n";
      if (KC_ < KS_) render_running_total(s, ind, "ps");
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t v = 0; v < nv; v++)
          s << ind << vstore(tile_addr("ps", i, v), acc(i, v)) << "\n";
      s << ind << "continue;\n";
      return;
    }
    if (KC_ < K_) {
      s << ind << T_ << "* ca = cacc + (n0 - n_lo) * " << MPAD_ << " + m0;\n";
      render_running_total(s, ind, "ca");
      s << ind << "if (ke < " << khi_ << ") {\n";
      for (int64_t i = 0; i < TN_; i++)
        for (int64_t v = 0; v < nv; v++)
          s << ind << "  " << vstore(tile_addr("ca", i, v), acc(i, v)) << "\n";
      s << ind << "  continue;\n" << ind << "}\n";
    }
    render_epilogue(s, ind, TN_, TM_);
  }

  // This cache block's partial joins the running total of the blocks before it, at `at`.
  void render_running_total(std::ostringstream& s, const std::string& ind, const std::string& at) {
    s << ind << "if (kc > " << klo_ << ") {\n";
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t v = 0; v < TM_ / W_; v++)
        s << ind << "  " << acc(i, v) << " = " << vload(tile_addr(at, i, v)) << " + " << acc(i, v)
          << ";\n";
    s << ind << "}\n";
  }

  // Scratch layout of split-K: counters first (64-byte aligned), partial tiles after them.
  int64_t counter_bytes() const { return KernelPlan{t_}.scratch(k_).zeroed; }
  // The first element of slice `slice`'s partial of the tile at (n0, m0).
  std::string part_tile(const std::string& slice) {
    int64_t npad = (N_ + TN_ - 1) / TN_ * TN_;
    return "part + ((bt * " + std::to_string(S_) + " + " + slice + ") * " + std::to_string(npad) +
           " + n0) * " + std::to_string(MPAD_) + " + m0";
  }

  // After a unit's slice: the unit that completes its row block's last slice (the counter's
  // acquire-release add orders the other units' partial stores before its loads) sums the
  // partials in slice order and runs the epilogue. It works one vector at a time (a 1 x W tile):
  // a register tile's worth of straight-line code here cost more compile time than the
  // micro-kernel, for a pass over the block that memory bounds anyway.
  void render_split_finish(std::ostringstream& s, const TileRowSums& sums) {
    int64_t npad = (N_ + TN_ - 1) / TN_ * TN_;
    s << "    if (__atomic_add_fetch(cnt + bt * " << (N_ + NC_ - 1) / NC_
      << " + rb, 1, __ATOMIC_ACQ_REL) != " << S_ << ") continue;\n";
    sums.finish(s);
    s << "    for (int64_t n0 = n_lo; n0 < n_hi; n0++) {\n";
    s << "      for (int64_t m0 = 0; m0 < " << MPAD_ << "; m0 += " << W_ << ") {\n";
    std::string ind = "        ";
    s << ind << "const " << T_ << "* ps = " << part_tile("0") << ";\n";
    s << ind << VT_ << " " << acc(0, 0) << " = " << vload("ps") << ";\n";
    s << ind << "for (int64_t q = 1; q < " << S_ << "; q++) " << acc(0, 0) << " = " << acc(0, 0)
      << " + " << vload("ps + q * " + std::to_string(npad * MPAD_)) << ";\n";
    render_epilogue(s, ind, 1, W_);
    s << "      }\n    }\n";
  }

  // Declares the accumulators at zero and adds the terms for k in [lo, hi) into them.
  void render_k_loop(std::ostringstream& s, const std::string& ind, const std::string& lo,
                     const std::string& hi) {
    int64_t nv = TM_ / W_;
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t v = 0; v < nv; v++) s << ind << VT_ << " " << acc(i, v) << " = {0};\n";
    if (pack_rows_) panel_->tile_pointers(s, ind);
    s << ind << "for (int64_t k = " << lo << "; k < " << hi << "; k++) {\n";
    std::string in = ind + "  ";
    if (pf_) pf_->step(s, in);
    for (size_t j = 0; j < p_.cols.size(); j++)
      for (int64_t v = 0; v < nv; v++) {
        std::string addr;
        if (pack_) {
          addr = cpanel_->load(j, v);
        } else {
          std::vector<std::string> idx = base_;
          idx[p_.col] = "(m0 + " + std::to_string(v * W_) + ")";
          idx[p_.red] = "k";
          addr = "b" + std::to_string(p_.cols[j]->buf) + " + " +
                 ExprEmitter::index(p_.cols[j]->view, idx);
        }
        s << in << (hold_ ? "" : "const ") << VT_ << " q" << j << "_" << v << " = " << vload(addr)
          << ";\n";
      }
    if (hold_) {
      s << in << "__asm__(\"\" :";
      for (size_t j = 0; j < p_.cols.size(); j++)
        for (int64_t v = 0; v < nv; v++)
          s << (j + v ? ", " : " ") << "\"+v\"(q" << j << "_" << v << ")";
      s << ");\n";
    }
    const Expr& term = *p_.reduce->src[0];
    for (int64_t i = 0; i < TN_; i++) {
      std::vector<std::string> idx = base_;
      idx[p_.row] = "r" + std::to_string(i);
      idx[p_.red] = "k";
      ExprEmitter::Memo memo;
      emit_scalars(term, i, s, in, memo, idx);
    }
    for (int64_t i = 0; i < TN_; i++)
      for (int64_t v = 0; v < nv; v++) s << in << acc(i, v) << " += " << vexpr(term, i, v) << ";\n";
    s << ind << "}\n";
  }

  // Whether the ops after the reduce have a vector form: + - * / and negation of the reduce's
  // dtype over unmasked constants and loads that are contiguous or constant along col.
  bool vector_epilogue(const Expr& e) {
    if (&e == p_.reduce) return true;
    if (e.dtype != p_.reduce->dtype) return false;
    switch (e.kind) {
      case Expr::Kind::Load:
        return !e.view.has_mask() &&
               (e.view.strides[p_.col] == 1 || !(deps_(e) & (uint64_t{1} << p_.col)));
      case Expr::Kind::Const:
        return !e.view.has_mask();
      case Expr::Kind::Alu:
        if (!ir::op_has(e.op, ir::TileEpilogue)) return false;
        for (auto& src : e.src)
          if (!vector_epilogue(*src)) return false;
        return true;
      default:
        return false;
    }
  }

  // The vector epilogue's operands at row n0 + i, columns m0 + jv: one pointer each.
  void declare_epilogue_loads(const Expr& e, std::ostringstream& s, const std::string& ind) {
    if (&e == p_.reduce || epi_ptr_.count(&e)) return;
    if (e.kind == Expr::Kind::Load) {
      const std::string name = "lp" + std::to_string(epi_ptr_.size());
      std::vector<std::string> idx = base_;
      idx[p_.row] = "(n0 + i)";
      idx[p_.col] = "(m0 + jv)";
      s << ind << "const " << ctype(e.dtype) << "* " << name << " = b" << e.buf << " + "
        << ExprEmitter::index(e.view, idx) << ";\n";
      epi_ptr_[&e] = name;
      return;
    }
    for (auto& src : e.src) declare_epilogue_loads(*src, s, ind);
  }

  // The vector form of the ops after the reduce for one vector of sums, `sv`.
  std::string vepi(const Expr& e) {
    if (&e == p_.reduce) return "sv";
    switch (e.kind) {
      case Expr::Kind::Load: {
        const std::string& at = epi_ptr_.at(&e);
        if (deps_(e) & (uint64_t{1} << p_.col)) return vload(at);
        return "*" + at;
      }
      case Expr::Kind::Const:
        return literal(e.value, e.dtype);
      default:
        break;
    }
    std::vector<std::string> a;
    for (auto& src : e.src) a.push_back(vepi(*src));
    return render_template(ir::op_info(e.op).c_float, e.dtype, a);
  }

  // A whole tile under a vector epilogue of plain arithmetic (vector_epilogue: no libm call that
  // would make GCC spill the accumulators) goes from each accumulator through the ops straight to
  // the output, one vector at a time, skipping the local tile's round trip through L1 (2 tn nv
  // memory operations). The study's input gradient dz W at avx512, the generated kernel alone
  // (1 thread, 8 alternated runs, medians): 0.98x the time.
  void render_direct_store(std::ostringstream& s, const std::string& ind, int64_t tn, int64_t tm) {
    s << ind << "if (n0 + " << tn << " <= n_hi && m0 + " << tm << " <= " << M_ << ") {\n";
    std::vector<std::string> idx = base_;
    idx[p_.row] = "(n0 + i)";
    idx[p_.col] = "(m0 + jv)";
    for (int64_t i = 0; i < tn; i++)
      for (int64_t v = 0; v < tm / W_; v++) {
        const std::string in = ind + "  ";
        s << in << "{\n" << in << "  const int64_t i = " << i << ", jv = " << v * W_ << ";\n";
        s << in << "  " << T_ << "* out = b0 + " << ExprEmitter::index(k_.out_view, idx) << ";\n";
        epi_ptr_.clear();
        declare_epilogue_loads(*k_.value, s, in + "  ");
        s << in << "  const " << VT_ << " sv = " << acc(i, v) << ";\n";
        s << in << "  " << vstore("out", vepi(*k_.value)) << "\n" << in << "}\n";
      }
    s << ind << "  continue;\n" << ind << "}\n";
  }

  // Accumulators -> a local tile -> the elementwise ops after the reduce -> the output. The tile
  // is tn rows by tm columns (tm a multiple of W) at (n0, m0), its sums in acc(i, v). With a
  // vector form of the ops, whole columns go one vector at a time in a loop over the tile's rows
  // (one copy of the ops, not one per register of the tile: GCC's time grew with that code, and
  // the tile's round trip through L1 is small beside its reduce); other columns and epilogues go
  // element by element. With M a multiple of tm, mv below is a constant and GCC vectorises the
  // element loop whole (tanh included: no peel, no tail). Measured against it at AVX2 (issue 11,
  // tanh(x W^T + b), one thread, paired): the store straight from the accumulators through a
  // vector form of ember_tanhf (bit-identical over all 2^32 inputs) ran 2-4% slower at K = 128
  // and 9-13% at K = 8 (twelve live accumulators leave the tanh's constants no registers: GCC
  // spills), the same on the tile's rows 3% slower. The epilogue costs tanh's arithmetic, about
  // 30 vector operations a vector, as much as a separate tanh pass.
  void render_epilogue(std::ostringstream& s, const std::string& ind, int64_t tn, int64_t tm) {
    int64_t nv = tm / W_;
    const ir::View& ov = k_.out_view;
    bool vec = k_.buffers[0].dtype == p_.reduce->dtype && !ov.has_mask() &&
               ov.strides[p_.col] == 1 && vector_epilogue(*k_.value);
    if (vec) render_direct_store(s, ind, tn, tm);
    s << ind << T_ << " tl[" << tn * tm << "] __attribute__((aligned(64)));\n";
    for (int64_t i = 0; i < tn; i++)
      for (int64_t v = 0; v < nv; v++)
        s << ind << vstore("tl + " + std::to_string(i * tm + v * W_), acc(i, v)) << "\n";
    if (vec) {
      const std::string in = ind + "    ";
      s << ind << "if (m0 + " << tm << " <= " << M_ << ") {\n";
      s << ind << "  for (int64_t i = 0; i < " << tn << " && n0 + i < n_hi; i++)\n";
      s << ind << "    for (int64_t jv = 0; jv < " << tm << "; jv += " << W_ << ") {\n";
      std::vector<std::string> idx = base_;
      idx[p_.row] = "(n0 + i)";
      idx[p_.col] = "(m0 + jv)";
      s << in << "  " << T_ << "* out = b0 + " << ExprEmitter::index(ov, idx) << ";\n";
      epi_ptr_.clear();
      declare_epilogue_loads(*k_.value, s, in + "  ");
      s << in << "  const " << VT_ << " sv = " << vload("tl + i * " + std::to_string(tm) + " + jv")
        << ";\n";
      s << in << "  " << vstore("out", vepi(*k_.value)) << "\n";
      s << in << "}\n";
      s << ind << "  continue;\n" << ind << "}\n";
    }
    s << ind << "const int64_t mv = " << M_ << " - m0 < " << tm << " ? " << M_ << " - m0 : " << tm
      << ";\n";
    render_scalar_store(s, ind, k_, p_, em_, base_, T_, tn, tm);
  }

  const Kernel& k_;
  const TilePlan& t_;
  const TileOperands& p_;
  int64_t TN_, TM_, W_, KC_, NC_, MPAD_, KS_, S_;
  int64_t MB_, NCB_;  // BlockCols: columns per unit of work, and column blocks
  std::string klo_, khi_;
  std::string mlo_, mhi_;  // the unit's padded column range (numbers without column blocks)
  bool pack_ = false, pack_rows_ = false, per_tile_ = false, cols_outer_ = false;
  bool hold_ = false;      // Hold
  bool col_tile_ = false;  // the column panel per column tile (TileColPanel's per_tile)
  bool whole_ = false;     // the column panel of the unit's whole range (col_panel_whole_range)
  ExprEmitter em_;
  AxisDeps deps_;
  std::map<std::pair<const Expr*, int64_t>, std::string> scal_;
  std::unordered_map<const Expr*, std::string> epi_ptr_;  // the vector epilogue's load pointers
  std::optional<TileRowPanel> panel_;   // the row operands' panel (Pack on the row axis)
  std::optional<TileColPanel> cpanel_;  // the column operands' panel (Pack on the column axis)
  const TilePrefetch* pf_ = nullptr;    // the k loops' prefetches (render)
};

}  // namespace

std::string render_tile(const Kernel& k, const TilePlan& t, const TileOperands& p,
                        const std::string& fn) {
  return TileRenderer(k, t, p).render(fn);
}

}  // namespace ember::codegen
