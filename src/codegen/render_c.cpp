#include "codegen/render_c.h"
#include "codegen/loop_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "codegen/blocked_sum.h"
#include "codegen/c_expr.h"
#include "codegen/column_split.h"
#include "codegen/reduce_accumulators.h"
#include "codegen/render_dot.h"
#include "codegen/render_tile.h"
#include "ember/error.h"

namespace ember::codegen {

using ir::Op;
using schedule::Expr;
using schedule::Kernel;

namespace {

class Renderer {
 public:
  // `split`: a column split's slice (rows), 0 without.
  Renderer(const Kernel& k, const LoopPlan& p, int64_t split, const Dialect& d)
      : k_(k),
        rank_(k.full_shape.size()),
        nglob_(rank_ - k.reduce_axes.size()),
        up_(p.upcast),
        unroll_(p.unroll),
        split_(split),
        nest_plans_(p.nests),
        d_(d),
        em_(d) {}

  void group(int64_t local) { group_ = k_.reduce_axes.empty() ? 0 : local; }

  std::string render(const std::string& fn) {
    std::ostringstream s;
    d_.signature(s, fn, k_);
    if (const std::string id = d_.work_item(); !id.empty()) return render_work_item(s, id);
    std::string ind = "  ";
    if (split_) render_split_scratch(s);
    if (nglob_ == 0) {
      s << ind << "for (int64_t o_ = start; o_ < end; o_++) {\n";
      ind += "  ";
    }
    // Elementwise: the innermost loop vectorises, or the one around a short last axis. So does a
    // short reduce's (short_reduce, loop_shapes.h) last output loop, the reduce unrolled inside it.
    short_red_ = short_reduce(k_) && unroll_ == 1 &&
                 std::all_of(up_.begin(), up_.end(), [](int64_t u) { return u == 1; });
    const bool elementwise = (k_.reduce_axes.empty() || short_red_) && nglob_ > 0;
    elementwise_ = elementwise;
    if (elementwise) hide_strides(s);
    // A concatenation along axis 0 (concat_axis): a switch over o0, each case its own loops with
    // o0 a constant, so that only that piece's loads remain (the first convolution's stacked
    // taps, E_9_64_8_8: 0.1x the time of one loop evaluating every piece, one thread).
    const bool cases = elementwise && !split_ && up_[0] == 1 && unroll_ == 1 &&
                       schedule::kernel_nests(k_).empty() && concat_axis(k_, 0);
    if (nglob_ > 0) open_loop(s, ind, 0);
    if (cases) {
      s << ind << "switch (o0) {\n";
      for (int64_t v = 0; v < k_.full_shape[0]; v++) {
        s << ind << "case " << v << ": {\n";
        fixed0_ = std::to_string(v);
        std::string in = ind + "  ";
        loops_and_body(s, in, ind.size() + 2);
        s << in << "break;\n" << ind << "}\n";
      }
      fixed0_.clear();
      s << ind << "}\n";
    } else {
      loops_and_body(s, ind, ind.size());
    }
    while (ind.size() > 2) {
      ind.resize(ind.size() - 2);
      s << ind << "}\n";
    }
    s << "}\n";
    return s.str();
  }

 private:
  // One work-item per output element (render_work_item in render_c.h): its output index decoded
  // from the work-item's id, then the loops' work at that index.
  std::string render_work_item(std::ostringstream& s, const std::string& id) {
    if (split_ || unroll_ != 1 ||
        std::any_of(up_.begin(), up_.end(), [](int64_t u) { return u != 1; }))
      throw Error("internal error: kernel " + k_.name() + ": a " + d_.name() +
                  " work-item renders plain loops only");
    if (group_) {  // a work-group per output element (GpuKind::GroupReduce)
      s << "  const int64_t w_ = " << d_.group_id() << ", l_ = " << d_.local_id() << ";\n";
    } else {
      s << "  const int64_t w_ = " << id << ";\n";
      s << "  if (w_ >= " << work_items(k_) << ") return;\n";
    }
    int64_t inner = 1;  // the output elements per step of axis d
    for (size_t d = nglob_; d-- > 0;) {
      s << "  const int64_t o" << d << " = "
        << (inner > 1 ? "w_ / " + std::to_string(inner) : "w_");
      if (d > 0) s << " % " << k_.full_shape[d];
      s << ";\n";
      inner *= k_.full_shape[d];
    }
    std::string ind = "  ";
    body(s, ind);
    s << "}\n";
    return s.str();
  }

  // The vectorised loop's power-of-two strides (opaque_stride, loop_shapes.h) as variables GCC
  // cannot see through: a residual add reading a convolution's channels-last output into NCHW
  // (stride 64) then vectorises with element-wise loads instead of staying scalar.
  void hide_strides(std::ostringstream& s) {
    const size_t d = short_last_axis(k_, up_) ? nglob_ - 2 : nglob_ - 1;
    const std::vector<int64_t> strides = opaque_strides(k_, d);
    if (strides.empty()) return;
    ExprEmitter::declare_strides(s, "  ", strides);
    em_.hide_strides(d);
  }

  // The loop over output axis d (its pragmas first).
  void open_loop(std::ostringstream& s, std::string& ind, size_t d) {
    const bool short_last = short_last_axis(k_, up_);
    const size_t vec_axis = short_last ? nglob_ - 2 : nglob_ - 1;
    int64_t n = k_.full_shape[d] / up_[d];
    if (elementwise_ && d == vec_axis && up_[d] == 1) pragma(s, ind, d_.ivdep());
    if (short_last && d + 1 == nglob_) pragma(s, ind, d_.unroll(n));
    if (d == 0 && split_) {
      // A unit of work is one row slice of one column unit (column_split.h).
      const int64_t S = column_split_slices(k_, split_);
      s << ind << "for (int64_t os_ = start; os_ < end; os_++) {\n";
      s << ind << "  const int64_t o0 = os_ / " << S << ", sl_ = os_ % " << S << ";\n";
    } else if (d == 0) {
      s << ind << "for (int64_t o0 = start; o0 < end; o0++) {\n";
    } else {
      s << ind << "for (int64_t o" << d << " = 0; o" << d << " < " << n << "; o" << d << "++) {\n";
    }
    ind += "  ";
  }

  // The loops over output axes 1.., the body inside, closed back to indent `depth`. Where the
  // loads' masks along the outer axes all hold in a range of them (outer_unmasked_ranges), the
  // innermost loop twice: unmasked under one test of those ranges, and as it is for the rest.
  void loops_and_body(std::ostringstream& s, std::string& ind, size_t depth) {
    for (size_t d = 1; d + 1 < nglob_; d++) open_loop(s, ind, d);
    std::vector<std::pair<int64_t, int64_t>> outer;
    if (elementwise_ && !split_ && unroll_ == 1)
      outer = outer_unmasked_ranges(k_, up_, !fixed0_.empty());
    std::string test;
    for (size_t d = 0; d < outer.size(); d++) {
      const std::string o = axis_index(d), a = std::to_string(outer[d].first);
      if (outer[d].first > 0 || outer[d].second < k_.full_shape[d])
        test += (test.empty() ? "" : " && ") + o + " >= " + a + " && " + o + " < " +
                std::to_string(outer[d].second);
    }
    if (!test.empty()) {
      s << ind << "if (" << test << ") {\n";
      outer_ = outer;
      forget();
      innermost(s, ind + "  ");
      outer_.clear();
      forget();
      s << ind << "} else {\n";
    }
    innermost(s, test.empty() ? ind : ind + "  ");
    if (!test.empty()) s << ind << "}\n";
    while (ind.size() > depth) {
      ind.resize(ind.size() - 2);
      s << ind << "}\n";
    }
  }

  // The innermost loop (none where axis 0, the thread pool's, is the only one) and the body,
  // split around its masks where unmasked_range finds a middle.
  void innermost(std::ostringstream& s, const std::string& at) {
    const auto [lo, hi] = unmasked_range();
    std::string ind = at;
    if (lo < hi) {
      split_last_loop(s, ind, lo, hi);
      return;
    }
    if (nglob_ > 1) open_loop(s, ind, nglob_ - 1);
    body(s, ind);
    if (nglob_ > 1) s << at << "}\n";
  }

  // Forgets what split_last_loop assumed, keeping the outer ranges tested around it.
  void forget() {
    em_.forget();
    for (size_t d = 0; d < outer_.size(); d++) em_.assume(d, outer_[d].first, outer_[d].second);
  }

  // unmasked_range (loop_shapes.h) for the loops this renderer opens: an elementwise kernel's,
  // not a column split's.
  std::pair<int64_t, int64_t> unmasked_range() const {
    if (!elementwise_ || split_) return {0, 0};
    return codegen::unmasked_range(k_, up_);
  }

  // The innermost loop in three: [0, lo), [lo, hi) with its masks known to hold, [hi, n).
  void split_last_loop(std::ostringstream& s, const std::string& ind, int64_t lo, int64_t hi) {
    const size_t d = nglob_ - 1;
    const std::string o = "o" + std::to_string(d);
    const int64_t cuts[4] = {0, lo, hi, k_.full_shape[d]};
    for (int p = 0; p < 3; p++) {
      if (cuts[p] == cuts[p + 1]) continue;
      if (p == 1) {
        pragma(s, ind, d_.ivdep());
        em_.assume(d, lo, hi);
      }
      s << ind << "for (int64_t " << o << " = " << cuts[p] << "; " << o << " < " << cuts[p + 1]
        << "; " << o << "++) {\n";
      std::string in = ind + "  ";
      body(s, in);
      s << ind << "}\n";
      forget();
    }
  }

  void pragma(std::ostringstream& s, const std::string& ind, const std::string& line) {
    if (!line.empty()) s << ind << line << "\n";
  }

  // The loops' work at one output index: the nests (computed once: their kernels have one output
  // element), then the value and its stores.
  void body(std::ostringstream& s, std::string& ind) {
    render_nests(s, ind);
    if (k_.reduce_axes.empty()) {
      open_upcast(s, ind);
      // Every output's value first (one memo: shared subexpressions once), then the stores: an
      // output that overwrites an input read at this index is stored after its last read.
      std::unordered_map<const Expr*, std::string> memo = nest_vars_;
      std::string v = emit(*k_.value, s, ind, memo);
      std::vector<std::string> more;
      for (auto& o : k_.more_outputs) more.push_back(emit(*o.value, s, ind, memo));
      store(s, ind, v);
      for (size_t j = 0; j < more.size(); j++)
        s << ind << "b" << j + 1 << "[" << em_.index_here(k_.more_outputs[j].view, axes())
          << "] = " << more[j] << ";\n";
      close_upcast(s, ind);
    } else {
      render_reduce(s, ind);
    }
  }

  // Each nest in a block of its own, rendered exactly as its kernel would be on its own (same
  // loops, same summation order, so the same result), its value left in n<i>_.
  void render_nests(std::ostringstream& s, const std::string& ind) {
    auto nests = schedule::kernel_nests(k_);
    for (size_t i = 0; i < nests.size(); i++) {
      const Kernel sub = schedule::nest_kernel(k_, *nests[i]);
      std::string var = "n" + std::to_string(i) + "_";
      s << ind << ctype(nests[i]->dtype) << " " << var << ";\n";
      s << ind << "{\n";
      Renderer r(sub, nest_plans_[i], 0, d_);
      r.result_ = var;
      std::string in = ind + "  ";
      r.body(s, in);
      s << ind << "}\n";
      nest_vars_[nests[i]] = var;
    }
  }

  void render_reduce(std::ostringstream& s, std::string& ind) {
    const Expr* red = schedule::top_reduce(*k_.value);
    if (!red) throw Error("render: reduce kernel without a reduce");
    int64_t tile = 1;
    for (size_t d = 0; d < nglob_; d++) tile *= up_[d];
    const Accumulators acc(*red, tile * unroll_, d_);
    acc.declare(s, ind);
    // Floating sums over more than kSumBlock terms per accumulator are blocked and pairwise
    // (BlockedSum above): `acc` holds the current block's partial only.
    int64_t per_slot = 1;
    for (size_t d = nglob_; d < rank_; d++) per_slot *= k_.full_shape[d];
    per_slot /= unroll_;
    if (group_) return render_group_reduce(s, ind, acc);
    BlockedSum bs;
    bs.on = red->op == Op::SUM && is_floating_point(red->dtype) && per_slot > kSumBlock;
    if (bs.on) bs.begin(s, ind, acc.T, acc.n, per_slot, k_.full_shape[rank_ - 1] / unroll_);
    std::string rind = ind;
    open_reduce_loops(s, rind, bs);
    render_update(s, rind, acc);
    while (rind.size() > ind.size()) {
      rind.resize(rind.size() - 2);
      s << rind << "}\n";
      if (bs.on && rind.size() == bs.flush_depth) bs.after_block(s, rind);
    }
    if (bs.on) bs.finish(s, ind);
    if (split_) render_split_finish(s, ind, bs);
    render_reduce_epilogue(s, ind, acc);
  }

  // The group reduce (GpuKind::GroupReduce): work-item l_ sums terms l_, l_ + L, ... of the
  // flattened reduce axes (the last fastest), the group's partials are combined pairwise in local
  // memory (a tree: log2 L steps between barriers), and work-item 0 runs the epilogue.
  void render_group_reduce(std::ostringstream& s, std::string& ind, const Accumulators& acc) {
    int64_t terms = 1;
    for (size_t d = nglob_; d < rank_; d++) terms *= k_.full_shape[d];
    s << ind << "for (int64_t f_ = l_; f_ < " << terms << "; f_ += " << group_ << ") {\n";
    std::string rind = ind + "  ";
    int64_t inner = 1;
    for (size_t d = rank_; d-- > nglob_;) {
      s << rind << "const int64_t r" << d << " = f_"
        << (inner > 1 ? " / " + std::to_string(inner) : "") << " % " << k_.full_shape[d] << ";\n";
      inner *= k_.full_shape[d];
    }
    render_update(s, rind, acc);
    s << ind << "}\n";
    for (auto& x : acc.arrays)
      s << ind << d_.local_array(acc.T, "g" + x + "_", group_) << "\n"
        << ind << "g" << x << "_[l_] = " << x << "0;\n";
    s << ind << d_.barrier() << "\n";
    s << ind << "for (int64_t h_ = " << group_ / 2 << "; h_ > 0; h_ >>= 1) {\n";
    s << ind << "  if (l_ < h_) {\n";
    for (auto& x : acc.arrays) {
      const std::string g = "g" + x + "_";
      s << ind << "    " << g << "[l_] = " << acc.update(g + "[l_]", g + "[l_ + h_]") << ";\n";
    }
    s << ind << "  }\n" << ind << "  " << d_.barrier() << "\n" << ind << "}\n";
    s << ind << "if (l_ == 0) {\n";
    std::string in = ind + "  ";
    for (auto& x : acc.arrays) s << in << x << "0 = g" << x << "_[0];\n";
    render_reduce_epilogue(s, in, acc);
    s << ind << "}\n";
  }

  // The loops over the reduce axes; the last in blocks of kSumBlock iterations where the sum is
  // blocked (each block flushed when done; under split-K, those of the unit's slice only).
  void open_reduce_loops(std::ostringstream& s, std::string& rind, BlockedSum& bs) {
    for (size_t d = nglob_; d < rank_; d++) {
      int64_t n = k_.full_shape[d];
      if (d + 1 == rank_ && unroll_ > 1) n /= unroll_;
      if (d + 1 == rank_ && bs.on && n > kSumBlock) {
        if (split_)
          s << rind << "const int64_t rlo_ = sl_ * " << split_ << ", rhi_ = rlo_ + " << split_
            << " < " << n << " ? rlo_ + " << split_ << " : " << n << ";\n";
        s << rind << "for (int64_t rb_ = " << (split_ ? "rlo_" : "0") << "; rb_ < "
          << (split_ ? std::string("rhi_") : std::to_string(n)) << "; rb_ += " << kSumBlock
          << ") {\n";
        rind += "  ";
        s << rind << "int64_t re_ = rb_ + " << kSumBlock << " < " << n << " ? rb_ + " << kSumBlock
          << " : " << n << ";\n";
        s << rind << "for (int64_t r" << d << " = rb_; r" << d << " < re_; r" << d << "++) {\n";
        bs.flush_depth = rind.size();
        rind += "  ";
        continue;
      }
      if (d + 1 == rank_ && bs.on) bs.flush_depth = rind.size();
      if (short_red_) pragma(s, rind, d_.unroll(n));
      s << rind << "for (int64_t r" << d << " = 0; r" << d << " < " << n << "; r" << d << "++) {\n";
      rind += "  ";
    }
    if (unroll_ > 1) {
      // Kept as a loop (not unrolled): GCC vectorises it across q, calls to libmvec included.
      pragma(s, rind, d_.unroll(1));
      s << rind << "for (int q = 0; q < " << unroll_ << "; q++) {\n";
      rind += "  ";
    }
  }

  // One term into its accumulator, for each element of the register tile.
  void render_update(std::ostringstream& s, std::string& rind, const Accumulators& acc) {
    open_upcast(s, rind);
    std::unordered_map<const Expr*, std::string> memo = nest_vars_;
    std::string v = emit(*acc.red.src[0], s, rind, memo);
    std::string i =
        "(" + tile_index() + ")*" + std::to_string(unroll_) + (unroll_ > 1 ? " + q" : "");
    if (acc.keyed) {
      s << rind << acc.T << " k_" << v << " = " << acc.fx << "key(" << v << "), m_" << v << " = "
        << acc.fx << "mag(" << v << ");\n";
      s << rind << acc.slot("nan", i) << " = " << acc.update(acc.slot("nan", i), "m_" + v) << ";\n";
      v = "k_" + v;
    }
    s << rind << acc.slot("acc", i) << " = " << acc.update(acc.slot("acc", i), v) << ";\n";
    close_upcast(s, rind);
  }

  // Combines the unrolled accumulators, then the elementwise ops after the reduce, the store and
  // the row sums beside it.
  void render_reduce_epilogue(std::ostringstream& s, std::string& ind, const Accumulators& acc) {
    open_upcast(s, ind);
    std::string base = "(" + tile_index() + ")*" + std::to_string(unroll_);
    for (auto& x : acc.arrays) {
      std::string r = x == "acc" ? "red" : "rnan";
      s << ind << acc.T << " " << r << " = " << acc.slot(x, base) << ";\n";
      for (int q = 1; q < unroll_; q++)
        s << ind << r << " = " << acc.update(r, acc.slot(x, base + " + " + std::to_string(q)))
          << ";\n";
    }
    std::unordered_map<const Expr*, std::string> memo2 = nest_vars_;
    memo2[&acc.red] = "red";
    if (acc.keyed) {
      s << ind << ctype(acc.red.dtype) << " redf = " << acc.fx << "unkey(red, rnan);\n";
      memo2[&acc.red] = "redf";
    }
    std::string out = emit(*k_.value, s, ind, memo2);
    store(s, ind, out);
    for (size_t j = 0; j < k_.more_outputs.size(); j++) render_row_sum(s, ind, j);
    close_upcast(s, ind);
  }

  // Split-K of a column sum (column_split.h): the completion counters (one per column unit) and
  // the slices' totals, [unit][slice][column], in the launch's scratch.
  void render_split_scratch(std::ostringstream& s) {
    const Expr* red = schedule::top_reduce(*k_.value);
    const size_t nb = k_.buffers.size();
    s << "  int64_t* restrict cnt_ = (int64_t*)bufs[" << nb << "];\n";
    s << "  " << ctype(red->dtype) << "* restrict part_ = (" << ctype(red->dtype)
      << "*)((char*)cnt_ + " << column_split_scratch(k_, up_[0], split_).zeroed << ");\n";
  }
  // After a slice: its total goes to scratch; the unit that completes a column unit's last slice
  // (the counter's acquire-release add orders the others' stores before its loads) feeds the
  // totals, in slice order, through the same binary counter as the blocks. A slice is a
  // power-of-two number of blocks, so the sums and their order are those of one unit walking all
  // the rows: the result does not depend on the split or the threads.
  void render_split_finish(std::ostringstream& s, const std::string& ind, const BlockedSum& bs) {
    const int64_t S = column_split_slices(k_, split_), nacc = up_[0];
    const std::string at = "part_[(o0 * " + std::to_string(S) + " + ";
    s << ind << "for (int i = 0; i < " << nacc << "; i++) " << at << "sl_) * " << nacc
      << " + i] = " << bs.slot("acc", "i") << ";\n";
    s << ind << "if (__atomic_add_fetch(cnt_ + o0, 1, __ATOMIC_ACQ_REL) != " << S
      << ") continue;\n";
    s << ind << "nblk_ = 0;\n";
    s << ind << "for (int64_t q_ = 0; q_ < " << S << "; q_++) {\n";
    s << ind << "  for (int i = 0; i < " << nacc << "; i++) " << bs.slot("acc", "i") << " = " << at
      << "q_) * " << nacc << " + i];\n";
    bs.flush(s, ind + "  ");
    s << ind << "}\n";
    bs.finish(s, ind);
  }

  // A further output of a reduce kernel (schedule/fuse_row_sums.h): a SUM over the kernel's one
  // reduce axis, stored at index 0 of the output axes along which its store view does not move
  // (only there is it computed). kSumBlock runs from zero, added in order.
  void render_row_sum(std::ostringstream& s, const std::string& ind, size_t j) {
    const schedule::KernelOutput& o = k_.more_outputs[j];
    const Expr& e = *o.value;
    if (e.kind != Expr::Kind::Reduce || e.op != Op::SUM || e.axes != k_.reduce_axes ||
        k_.reduce_axes.size() != 1 || !is_floating_point(e.dtype))
      throw Error("render: a reduce kernel's further output must be a sum over its reduce axis");
    std::string cond = "1";
    for (size_t d = 0; d < nglob_; d++)
      if (k_.full_shape[d] > 1 && o.view.strides[d] == 0) cond += " && " + axis_index(d) + " == 0";
    const char* T = ctype(e.dtype);
    const int64_t n = k_.full_shape[rank_ - 1];
    std::vector<std::string> idx = axes();
    idx[rank_ - 1] = "xr_";
    s << ind << "if (" << cond << ") {\n";
    s << ind << "  " << T << " xs_ = 0;\n";
    s << ind << "  for (int64_t xb_ = 0; xb_ < " << n << "; xb_ += " << kSumBlock << ") {\n";
    s << ind << "    " << T << " xp_ = 0;\n";
    s << ind << "    for (int64_t xr_ = xb_; xr_ < (xb_ + " << kSumBlock << " < " << n
      << " ? xb_ + " << kSumBlock << " : " << n << "); xr_++) {\n";
    ExprEmitter::Memo memo;
    std::string v = em_.emit(*e.src[0], s, ind + "      ", memo, idx);
    s << ind << "      xp_ += " << v << ";\n    " << ind << "}\n";
    s << ind << "    xs_ += xp_;\n" << ind << "  }\n";
    idx[rank_ - 1] = "0";
    s << ind << "  b" << j + 1 << "[" << ExprEmitter::index(o.view, idx) << "] = xs_;\n";
    s << ind << "}\n";
  }

  void open_upcast(std::ostringstream& s, std::string& ind) {
    for (size_t d = 0; d < nglob_; d++) {
      if (up_[d] == 1) continue;
      // The last output axis is the vector axis: kept as a loop, GCC vectorises across it (16
      // contiguous lanes) instead of unrolling it and vectorising the reduce loop with gathers.
      // Not where the unrolled reduce is the vector loop (q): there it unrolls inside it.
      const bool vec = d + 1 == nglob_ && unroll_ == 1;
      pragma(s, ind, d_.unroll(vec ? 1 : up_[d]));
      s << ind << "for (int64_t j" << d << " = 0; j" << d << " < " << up_[d] << "; j" << d
        << "++) {\n";
      ind += "  ";
    }
  }
  void close_upcast(std::ostringstream& s, std::string& ind) {
    for (size_t d = 0; d < nglob_; d++) {
      if (up_[d] == 1) continue;
      ind.resize(ind.size() - 2);
      s << ind << "}\n";
    }
  }
  std::string tile_index() {
    std::string r = "0";
    for (size_t d = 0; d < nglob_; d++)
      if (up_[d] > 1) r = "(" + r + ")*" + std::to_string(up_[d]) + " + j" + std::to_string(d);
    return r;
  }

  std::string axis_index(size_t d) {
    if (d == 0 && !fixed0_.empty()) return fixed0_;
    if (d < nglob_) {
      if (up_[d] > 1)
        return "(o" + std::to_string(d) + "*" + std::to_string(up_[d]) + " + j" +
               std::to_string(d) + ")";
      return "o" + std::to_string(d);
    }
    if (d + 1 == rank_ && unroll_ > 1)
      return "(r" + std::to_string(d) + "*" + std::to_string(unroll_) + " + q)";
    return "r" + std::to_string(d);
  }

  std::vector<std::string> axes() {
    std::vector<std::string> idx;
    for (size_t d = 0; d < rank_; d++) idx.push_back(axis_index(d));
    return idx;
  }
  std::string emit(const Expr& e, std::ostringstream& s, const std::string& ind,
                   ExprEmitter::Memo& memo) {
    return em_.emit(e, s, ind, memo, axes());
  }
  void store(std::ostringstream& s, const std::string& ind, const std::string& v) {
    if (!result_.empty()) {
      s << ind << result_ << " = " << v << ";\n";
      return;
    }
    s << ind << "b0[" << em_.index_here(k_.out_view, axes()) << "] = " << v << ";\n";
  }

  const Kernel& k_;
  size_t rank_, nglob_;
  std::vector<int64_t> up_;
  int64_t unroll_;
  int64_t split_;      // a column split's slice (rows), 0 without
  int64_t group_ = 0;  // a group reduce's work-items per group, 0 without
  bool short_red_ = false;
  std::vector<LoopPlan> nest_plans_;
  std::string result_;        // a nest's renderer: its value goes to this variable, not to b0
  bool elementwise_ = false;  // render(): the loops are an elementwise kernel's
  std::vector<std::pair<int64_t, int64_t>> outer_;  // outer axes' ranges tested around the loop
  std::string fixed0_;  // axis 0's index as a constant (a case of the switch over o0)
  std::unordered_map<const Expr*, std::string> nest_vars_;
  const Dialect& d_;
  ExprEmitter em_;
};

}  // namespace

std::string render_c(const Kernel& k, const KernelPlan& plan, const std::string& fn_name) {
  if (const std::string why = plan.illegal(k); !why.empty())
    throw Error("internal error: kernel " + k.name() + " cannot be rendered as '" + plan.str() +
                "': " + why);
  if (const auto* t = std::get_if<TilePlan>(&plan.layout))
    return render_tile(k, *t, *tile_operands(k), fn_name);  // legal: the kernel is a product
  if (const auto* d = std::get_if<DotPlan>(&plan.layout))
    return render_dot(k, *d, *tile_operands(k), fn_name);
  if (const auto* c = std::get_if<ColumnSplitPlan>(&plan.layout))
    return Renderer(k, LoopPlan{{c->cols, 1}, 1, {}}, c->slice_rows, c_dialect()).render(fn_name);
  return Renderer(k, std::get<LoopPlan>(plan.layout), 0, c_dialect()).render(fn_name);
}

int64_t work_items(const Kernel& k) {
  int64_t n = 1;
  for (size_t d = 0; d < k.full_shape.size() - k.reduce_axes.size(); d++) n *= k.full_shape[d];
  return n;
}

std::string render_work_item(const Kernel& k, const std::string& fn_name, const Dialect& d,
                             int64_t group) {
  if (d.work_item().empty())
    throw Error(std::string("internal error: the ") + d.name() + " dialect has no work-items");
  Renderer r(k, plain_loop_plan(k), 0, d);
  r.group(group);
  return r.render(fn_name);
}

}  // namespace ember::codegen
