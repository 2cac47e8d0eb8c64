// KernelPlan as text (plan_text.h): the kind's name, then the layout's fields as integers, a loop
// plan's nests recursively (each preceded by its upcast count, the nest count before them), then
// the plan's THREADS amount.
#include "codegen/plan_text.h"

#include <charconv>
#include <vector>

namespace ember::codegen {

namespace {

void put(std::string& s, int64_t v) {
  s += ' ';
  s += std::to_string(v);
}

void put_loop(std::string& s, const LoopPlan& l) {
  put(s, static_cast<int64_t>(l.upcast.size()));
  for (int64_t u : l.upcast) put(s, u);
  put(s, l.unroll);
  put(s, static_cast<int64_t>(l.nests.size()));
  for (const LoopPlan& n : l.nests) put_loop(s, n);
}

// Reads integers off the text, in order; fails (and stays failed) on anything else.
class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}
  int64_t next() {
    while (at_ < t_.size() && t_[at_] == ' ') at_++;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t_.data() + at_, t_.data() + t_.size(), v);
    if (ec != std::errc() || end == t_.data() + at_) {
      ok_ = false;
      return 0;
    }
    at_ = static_cast<size_t>(end - t_.data());
    return v;
  }
  // A count: non-negative and at most `most`.
  int64_t count(int64_t most) {
    const int64_t n = next();
    if (n < 0 || n > most) ok_ = false;
    return ok_ ? n : 0;
  }
  bool flag() {
    const int64_t v = next();
    if (v != 0 && v != 1) ok_ = false;
    return v == 1;
  }
  int axis() {
    const int64_t v = next();
    if (v < -1 || v > 64) ok_ = false;
    return static_cast<int>(v);
  }
  bool done() {
    while (at_ < t_.size() && t_[at_] == ' ') at_++;
    return ok_ && at_ == t_.size();
  }
  bool ok() const { return ok_; }

 private:
  std::string_view t_;
  size_t at_ = 0;
  bool ok_ = true;
};

constexpr int64_t kMaxRank = 64, kMaxNests = 64, kMaxDepth = 8;

LoopPlan read_loop(Reader& r, int depth) {
  LoopPlan l;
  l.upcast.resize(static_cast<size_t>(r.count(kMaxRank)));
  for (int64_t& u : l.upcast) u = r.next();
  l.unroll = r.next();
  const int64_t nests = r.count(depth < kMaxDepth ? kMaxNests : 0);
  for (int64_t i = 0; i < nests && r.ok(); i++) l.nests.push_back(read_loop(r, depth + 1));
  return l;
}

}  // namespace

std::string plan_text(const KernelPlan& plan) {
  std::string s = plan_kind_name(plan.kind());
  if (const auto* l = std::get_if<LoopPlan>(&plan.layout)) {
    put_loop(s, *l);
  } else if (const auto* t = std::get_if<TilePlan>(&plan.layout)) {
    for (int64_t v :
         {int64_t{t->row}, int64_t{t->col}, int64_t{t->red}, t->lanes, t->tile_rows, t->tile_cols,
          int64_t{t->pack_cols}, static_cast<int64_t>(t->row_panel), t->block_k, t->block_rows,
          t->block_cols, t->split_k, int64_t{t->cols_outer}, int64_t{t->hold}})
      put(s, v);
  } else if (const auto* d = std::get_if<DotPlan>(&plan.layout)) {
    for (int64_t v : {int64_t{d->row}, int64_t{d->col}, int64_t{d->red}, d->lanes, d->tile_rows,
                      d->tile_cols, d->block_rows, int64_t{d->hold}})
      put(s, v);
  } else {
    const auto& c = std::get<ColumnSplitPlan>(plan.layout);
    put(s, c.cols);
    put(s, c.slice_rows);
  }
  put(s, plan.threads);
  return s;
}

std::optional<KernelPlan> plan_from_text(std::string_view text) {
  const size_t sp = text.find(' ');
  const std::string_view kind = text.substr(0, sp);
  Reader r(sp == std::string_view::npos ? std::string_view() : text.substr(sp));
  KernelPlan p;
  if (kind == plan_kind_name(PlanKind::Loop)) {
    p.layout = read_loop(r, 0);
  } else if (kind == plan_kind_name(PlanKind::Tile)) {
    TilePlan t;
    t.row = r.axis();
    t.col = r.axis();
    t.red = r.axis();
    t.lanes = r.next();
    t.tile_rows = r.next();
    t.tile_cols = r.next();
    t.pack_cols = r.flag();
    const int64_t panel = r.count(2);
    t.row_panel = static_cast<RowPanel>(panel);
    t.block_k = r.next();
    t.block_rows = r.next();
    t.block_cols = r.next();
    t.split_k = r.next();
    t.cols_outer = r.flag();
    t.hold = r.flag();
    p.layout = t;
  } else if (kind == plan_kind_name(PlanKind::Dot)) {
    DotPlan d;
    d.row = r.axis();
    d.col = r.axis();
    d.red = r.axis();
    d.lanes = r.next();
    d.tile_rows = r.next();
    d.tile_cols = r.next();
    d.block_rows = r.next();
    d.hold = r.flag();
    p.layout = d;
  } else if (kind == plan_kind_name(PlanKind::ColumnSplit)) {
    ColumnSplitPlan c;
    c.cols = r.next();
    c.slice_rows = r.next();
    p.layout = c;
  } else {
    return std::nullopt;
  }
  p.threads = r.count(1);
  if (!r.done()) return std::nullopt;
  return p;
}

}  // namespace ember::codegen
