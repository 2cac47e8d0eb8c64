#include "codegen/loop_shapes.h"

#include <algorithm>
#include <functional>

namespace ember::codegen {

using ir::Op;
using schedule::Expr;
using schedule::Kernel;

namespace {

// An elementwise kernel's last axis up to this long is unrolled rather than vectorised: it would
// not fill SSE2's four float lanes. Then the loop around it vectorises (E_10000_2, the Gaussian
// log-probability's gradient over two action dimensions: 16 -> 8 us at AVX2 and SSE2, one thread).
constexpr int64_t kShortAxis = 4;

// The shortest unmasked middle of an innermost loop worth a loop of its own (one AVX2 vector).
constexpr int64_t kMinUnmasked = 8;
void loads_of(const Expr& e, std::vector<const Expr*>& out) {
  if (e.nested) return;
  if (e.kind == Expr::Kind::Load) out.push_back(&e);
  for (auto& x : e.src) loads_of(*x, out);
}

int count_reduces(const Expr& e) {
  int n = e.kind == Expr::Kind::Reduce;
  for (auto& x : e.src) n += count_reduces(*x);
  return n;
}

}  // namespace

bool short_last_axis(const Kernel& k, const std::vector<int64_t>& up) {
  const size_t n = k.full_shape.size();
  return k.reduce_axes.empty() && n >= 2 && up[n - 1] == 1 && up[n - 2] == 1 &&
         k.full_shape[n - 1] <= kShortAxis && k.full_shape[n - 2] > kShortAxis;
}

bool concat_axis(const Kernel& k, size_t d) {
  const size_t n = k.full_shape.size();
  if (!k.reduce_axes.empty() || d + 1 >= n || k.full_shape[d] > kMaxConcatAxis) return false;
  std::vector<const Expr*> ls;
  loads_of(*k.value, ls);
  for (auto& o : k.more_outputs) loads_of(*o.value, ls);
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (const Expr* e : ls)
    if (e->view.has_mask() && e->view.mask[d] != std::pair<int64_t, int64_t>{0, k.full_shape[d]})
      pieces.push_back(e->view.mask[d]);
  // Loads of one piece share its slice (an expand convolution's output and its bias).
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  bool disjoint = pieces.size() >= 2;
  for (size_t i = 1; i < pieces.size(); i++)
    disjoint = disjoint && pieces[i - 1].second <= pieces[i].first;
  return disjoint;
}

bool short_reduce(const Kernel& k) {
  const size_t rank = k.full_shape.size();
  if (k.reduce_axes.size() != 1 || k.reduce_axes[0] != static_cast<int64_t>(rank - 1) || rank < 3 ||
      k.full_shape[rank - 1] > kShortAxis || !k.more_outputs.empty() ||
      !schedule::kernel_nests(k).empty() || count_reduces(*k.value) != 1)
    return false;
  const Expr* red = schedule::top_reduce(*k.value);
  if (!red || red->op != Op::SUM) return false;
  std::vector<const Expr*> ls;
  loads_of(*red->src[0], ls);
  for (const Expr* l : ls)
    if (l->view.strides[rank - 2] != 0 && l->view.strides[rank - 2] != 1) return false;
  return true;
}

std::pair<int64_t, int64_t> unmasked_range(const Kernel& k, const std::vector<int64_t>& up) {
  const size_t n = k.full_shape.size(), d = n - 1;
  if (!k.reduce_axes.empty() || n < 2 || up[d] != 1 || short_last_axis(k, up) ||
      !schedule::kernel_nests(k).empty())
    return {0, 0};
  int64_t lo = 0, hi = k.full_shape[d];
  bool masked = false;
  std::function<void(const Expr&)> visit = [&](const Expr& e) {
    for (auto& x : e.src) visit(*x);
    if (e.kind == Expr::Kind::Alu || e.kind == Expr::Kind::Reduce || !e.view.has_mask() ||
        e.view.shape[d] != k.full_shape[d])
      return;
    auto [a, b] = e.view.mask[d];
    if ((a == 0 && b == e.view.shape[d]) || a >= b) return;
    masked = true;
    lo = std::max(lo, a);
    hi = std::min(hi, b);
  };
  visit(*k.value);
  for (auto& o : k.more_outputs) visit(*o.value);
  if (!masked || hi - lo < kMinUnmasked) return {0, 0};
  return {lo, hi};
}

std::vector<std::pair<int64_t, int64_t>> outer_unmasked_ranges(const Kernel& k,
                                                               const std::vector<int64_t>& up,
                                                               bool fixed0) {
  const size_t n = k.full_shape.size();
  if (!k.reduce_axes.empty() || n < 2 || short_last_axis(k, up) ||
      !schedule::kernel_nests(k).empty() ||
      std::any_of(up.begin(), up.end(), [](int64_t u) { return u != 1; }))
    return {};
  std::vector<std::pair<int64_t, int64_t>> r;
  for (size_t d = 0; d + 1 < n; d++) r.push_back({0, k.full_shape[d]});
  std::vector<const Expr*> ls;
  loads_of(*k.value, ls);
  for (auto& o : k.more_outputs) loads_of(*o.value, ls);
  bool cut = false, cut_last = false;
  for (const Expr* e : ls) {
    if (!e->view.has_mask()) continue;
    if (e->view.shape != k.full_shape) return {};
    for (size_t d = 0; d < n; d++) {
      auto [a, b] = e->view.mask[d];
      if ((a == 0 && b == k.full_shape[d]) || (d == 0 && fixed0)) continue;
      if (d + 1 == n) {
        cut_last = true;
        continue;
      }
      cut = true;
      r[d] = {std::max(r[d].first, a), std::min(r[d].second, b)};
      if (r[d].first >= r[d].second) return {};
    }
  }
  if (!cut || (cut_last && unmasked_range(k, up).first >= unmasked_range(k, up).second)) return {};
  return r;
}

bool opaque_stride(int64_t stride) {
  const int64_t a = stride < 0 ? -stride : stride;
  return a >= 8 && (a & (a - 1)) == 0;
}

std::vector<int64_t> opaque_strides(const Kernel& k, size_t d) {
  std::vector<const Expr*> ls;
  loads_of(*k.value, ls);
  for (auto& o : k.more_outputs) loads_of(*o.value, ls);
  std::vector<const ir::View*> views{&k.out_view};
  for (auto& o : k.more_outputs) views.push_back(&o.view);
  for (const Expr* l : ls) views.push_back(&l->view);
  std::vector<int64_t> r;
  for (const ir::View* v : views)
    if (d < v->shape.size() && v->shape[d] > 1 && opaque_stride(v->strides[d]) &&
        std::find(r.begin(), r.end(), v->strides[d]) == r.end())
      r.push_back(v->strides[d]);
  return r;
}

}  // namespace ember::codegen
