// KernelPlan as text (plan_text.h): the kind's name, then the layout's fields as integers, a loop
// plan's nests recursively (each preceded by its upcast count, the nest count before them), then
// the plan's THREADS amount.
#include "codegen/plan_text.h"

#include <charconv>
#include <concepts>
#include <type_traits>
#include <variant>
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

// The flat layouts' fields in text order, listed once for both directions: `f` (a Writer or a
// Fields reader) takes them all.
template <class P, class F>
requires std::same_as<std::remove_const_t<P>, TilePlan>
void fields(P& t, F&& f) {
  f(t.row, t.col, t.red, t.lanes, t.tile_rows, t.tile_cols, t.pack_cols, t.row_panel, t.block_k,
    t.block_rows, t.block_cols, t.split_k, t.cols_outer, t.hold);
}
template <class P, class F>
requires std::same_as<std::remove_const_t<P>, DotPlan>
void fields(P& d, F&& f) {
  f(d.row, d.col, d.red, d.lanes, d.tile_rows, d.tile_cols, d.block_rows, d.hold, d.block_cols);
}
template <class P, class F>
requires std::same_as<std::remove_const_t<P>, ColumnSplitPlan>
void fields(P& c, F&& f) { f(c.cols, c.slice_rows); }

// Writes each field as an integer.
struct Writer {
  std::string& s;
  template <class... T>
  void operator()(const T&... v) const {
    (put(s, static_cast<int64_t>(v)), ...);
  }
};

// Reads each field, checked by its type: ints are axes, bools flags, the row panel a RowPanel.
struct Fields {
  Reader& r;
  template <class... T>
  void operator()(T&... v) const {
    (read(v), ...);  // a fold over the comma: left to right
  }
  void read(int& v) const { v = r.axis(); }
  void read(int64_t& v) const { v = r.next(); }
  void read(bool& v) const { v = r.flag(); }
  void read(RowPanel& v) const { v = static_cast<RowPanel>(r.count(2)); }
};

}  // namespace

std::string plan_text(const KernelPlan& plan) {
  std::string s = plan_kind_name(plan.kind());
  std::visit(
      [&s](const auto& layout) {
        if constexpr (std::is_same_v<std::decay_t<decltype(layout)>, LoopPlan>)
          put_loop(s, layout);
        else
          fields(layout, Writer{s});
      },
      plan.layout);
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
    p.layout = TilePlan{};
  } else if (kind == plan_kind_name(PlanKind::Dot)) {
    p.layout = DotPlan{};
  } else if (kind == plan_kind_name(PlanKind::ColumnSplit)) {
    p.layout = ColumnSplitPlan{};
  } else {
    return std::nullopt;
  }
  std::visit(
      [&r](auto& layout) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(layout)>, LoopPlan>)
          fields(layout, Fields{r});
      },
      p.layout);
  p.threads = r.count(1);
  if (!r.done()) return std::nullopt;
  return p;
}

}  // namespace ember::codegen
