#include "schedule/kernel.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>
#include <unordered_map>

namespace ember::schedule {

namespace {

void view_key(std::ostringstream& o, const ir::View& v) {
  o << "v(";
  for (size_t i = 0; i < v.shape.size(); i++) o << v.shape[i] << ":" << v.strides[i] << ",";
  o << "o" << v.offset;
  for (auto& m : v.mask) o << "m" << m.first << "-" << m.second;
  o << ")";
}

void expr_key(std::ostringstream& o, const Expr& e, std::unordered_map<const Expr*, int>& seen) {
  auto it = seen.find(&e);
  if (it != seen.end()) {
    o << "@" << it->second;
    return;
  }
  int id = static_cast<int>(seen.size());
  seen[&e] = id;
  o << "[" << static_cast<int>(e.kind) << " " << ir::op_name(e.op) << " " << dtype_name(e.dtype);
  switch (e.kind) {
    case Expr::Kind::Load:
    case Expr::Kind::Rand:
      o << " b" << e.buf;
      view_key(o, e.view);
      break;
    case Expr::Kind::Const:
      o.precision(17);
      o << " c" << e.value;
      if (!is_floating_point(e.dtype)) o << " i" << e.ivalue;
      if (e.view.has_mask()) view_key(o, e.view);
      break;
    case Expr::Kind::Reduce:
      for (auto a : e.axes) o << " r" << a;
      if (e.nested) {
        o << " n";
        for (auto d : e.nest_shape) o << d << ",";
      }
      break;
    default:
      break;
  }
  for (auto& s : e.src) expr_key(o, *s, seen);
  o << "]";
}

using ViewFn = std::function<ir::View(const ir::View&)>;
using AxesFn = std::function<std::vector<int64_t>(const std::vector<int64_t>&)>;

ExprRef map_expr(const ExprRef& e, const ViewFn& fv, const AxesFn& fa,
                 std::unordered_map<const Expr*, ExprRef>& memo) {
  auto it = memo.find(e.get());
  if (it != memo.end()) return it->second;
  if (e->nested) return e;  // its own loop space: simplify() maps it separately
  auto n = std::make_shared<Expr>(*e);
  for (auto& s : n->src) s = map_expr(s, fv, fa, memo);
  if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Rand ||
      (e->kind == Expr::Kind::Const && e->view.shape.size()))
    n->view = fv(e->view);
  if (e->kind == Expr::Kind::Reduce) n->axes = fa(e->axes);
  memo[e.get()] = n;
  return n;
}

Kernel map_kernel(const Kernel& k, const ViewFn& fv, const AxesFn& fa) {
  Kernel r = k;
  std::unordered_map<const Expr*, ExprRef> memo;
  r.value = map_expr(k.value, fv, fa, memo);
  r.out_view = fv(k.out_view);
  for (auto& o : r.more_outputs) {
    o.value = map_expr(o.value, fv, fa, memo);
    o.view = fv(o.view);
  }
  r.reduce_axes = fa(k.reduce_axes);
  return r;
}

void for_each_view(const Expr& e, const std::function<void(const ir::View&)>& f) {
  if (e.nested) return;
  if (e.kind == Expr::Kind::Load || e.kind == Expr::Kind::Rand ||
      (e.kind == Expr::Kind::Const && e.view.shape.size()))
    f(e.view);
  for (auto& s : e.src) for_each_view(*s, f);
}

// Operations per loop-space element (`inner`: a reduce and what it reads) and per output element
// (`outer`: the elementwise ops after the reduce, e.g. a product's bias and activation, which run
// once per output, not once per reduced term). An elementwise kernel has only `outer` ops.
void count_ops(const Expr& e, double& inner, double& outer,
               std::unordered_map<const Expr*, bool>& seen, bool below_reduce = false) {
  if (seen[&e] || e.nested) return;  // a nest's work is counted over its own loop space
  seen[&e] = true;
  const bool reduce = e.kind == Expr::Kind::Reduce;
  if (reduce || (e.kind == Expr::Kind::Alu && e.op != ir::Op::CAST))
    (below_reduce || reduce ? inner : outer) += 1;
  for (auto& s : e.src) count_ops(*s, inner, outer, seen, below_reduce || reduce);
}

bool mask_free(const ir::View& v, size_t d) {
  return v.mask.empty() || (v.mask[d].first == 0 && v.mask[d].second == v.shape[d]);
}

}  // namespace

std::string Kernel::key() const {
  std::ostringstream o;
  o << "K";
  for (auto d : full_shape) o << d << ",";
  o << "|";
  for (auto a : reduce_axes) o << a << ",";
  for (auto& b : buffers) o << dtype_name(b.dtype) << ";";
  view_key(o, out_view);
  std::unordered_map<const Expr*, int> seen;
  expr_key(o, *value, seen);
  for (auto& out : more_outputs) {
    o << "|o";
    view_key(o, out.view);
    expr_key(o, *out.value, seen);
  }
  return o.str();
}

std::string Kernel::name() const {
  std::ostringstream o;
  o << (reduce_axes.empty() ? "E" : "r");
  for (size_t i = 0; i < full_shape.size(); i++) o << "_" << full_shape[i];
  if (auto n = kernel_nests(*this).size()) o << "_n" << n;  // e.g. E_n20: twenty nests
  return o.str();
}

double Kernel::flops() const {
  // The reduce axes' extent: a value's ops above its reduce run once per this many loop points.
  double reduced = 1;
  for (int64_t a : reduce_axes) reduced *= static_cast<double>(full_shape[static_cast<size_t>(a)]);
  std::unordered_map<const Expr*, bool> seen;
  double inner = 0, outer = 0;
  count_ops(*value, inner, outer, seen);
  const double points = static_cast<double>(ir::shape_numel(full_shape));
  double total = inner * points + outer * points / reduced;
  for (auto& o : more_outputs) {
    // A row sum (reduce kernels) runs once per index of the output axes its store moves along.
    double n = points, more_inner = 0, more_outer = 0;
    for (size_t d = 0; d < full_shape.size(); d++)
      if (!reduce_axes.empty() && d < o.view.shape.size() && o.view.shape[d] > 1 &&
          o.view.strides[d] == 0)
        n /= static_cast<double>(full_shape[d]);
    count_ops(*o.value, more_inner, more_outer, seen);
    total += more_inner * n + more_outer * n / reduced;
  }
  for (const Expr* n : kernel_nests(*this)) total += nest_kernel(*this, *n).flops();
  return total;
}

const Expr* top_reduce(const Expr& e) {
  if (e.nested) return nullptr;
  if (e.kind == Expr::Kind::Reduce) return &e;
  for (auto& s : e.src)
    if (auto* r = top_reduce(*s)) return r;
  return nullptr;
}

std::vector<const Expr*> kernel_nests(const Kernel& k) {
  std::vector<const Expr*> out;
  std::unordered_map<const Expr*, bool> seen;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (seen[&e]) return;
    seen[&e] = true;
    if (e.nested) {
      out.push_back(&e);
      return;
    }
    for (auto& s : e.src) walk(*s);
  };
  walk(*k.value);
  for (auto& o : k.more_outputs) walk(*o.value);
  return out;
}

Kernel nest_kernel(const Kernel& parent, const Expr& nest) {
  Kernel k;
  k.full_shape = nest.nest_shape;
  k.reduce_axes = nest.axes;
  auto v = std::make_shared<Expr>(nest);
  v->nested = false;
  v->nest_shape.clear();
  k.value = v;
  k.out_view = ir::View::contiguous(ir::Shape(nest.nest_shape.size(), 1));
  k.buffers = parent.buffers;
  return k;
}

double Kernel::bytes() const {
  double b = 0;
  for (auto& buf : buffers) b += static_cast<double>(buf.numel) * element_size(buf.dtype);
  return b;
}

namespace {

// Step 1 of simplify: output axes first, reduce axes last.
Kernel reduce_axes_last(const Kernel& in) {
  const size_t n = in.full_shape.size();
  auto is_red = [&](size_t d) {
    return std::find(in.reduce_axes.begin(), in.reduce_axes.end(), static_cast<int64_t>(d)) !=
           in.reduce_axes.end();
  };
  std::vector<int64_t> order;
  for (size_t d = 0; d < n; d++)
    if (!is_red(d)) order.push_back(static_cast<int64_t>(d));
  for (size_t d = 0; d < n; d++)
    if (is_red(d)) order.push_back(static_cast<int64_t>(d));
  std::vector<int64_t> inv(n);
  for (size_t i = 0; i < n; i++) inv[order[i]] = static_cast<int64_t>(i);
  auto remap = [&](const std::vector<int64_t>& axes) {
    std::vector<int64_t> r;
    for (auto a : axes) r.push_back(inv[a]);
    std::sort(r.begin(), r.end());
    return r;
  };
  Kernel k = map_kernel(
      in, [&](const ir::View& v) { return v.permute(order); }, remap);
  ir::Shape fs;
  for (auto o : order) fs.push_back(in.full_shape[o]);
  k.full_shape = fs;
  return k;
}

// The groups of consecutive axes that become one axis: size-1 axes are dropped, and neighbours
// that every access walks contiguously (and that are both output or both reduce axes) merge.
std::vector<std::vector<size_t>> axis_groups(const Kernel& k) {
  std::vector<ir::View> views;
  for_each_view(*k.value, [&](const ir::View& v) { views.push_back(v); });
  views.push_back(k.out_view);
  for (auto& o : k.more_outputs) {
    for_each_view(*o.value, [&](const ir::View& v) { views.push_back(v); });
    views.push_back(o.view);
  }
  const size_t n = k.full_shape.size(), nglob = n - k.reduce_axes.size();
  std::vector<std::vector<size_t>> groups;
  for (size_t d = 0; d < n; d++) {
    bool drop = k.full_shape[d] == 1;
    for (auto& v : views)
      if (!mask_free(v, d)) drop = false;
    if (drop) continue;
    bool merge = !groups.empty() && (groups.back().back() < nglob) == (d < nglob);
    if (merge) {
      size_t p = groups.back().back();
      for (auto& v : views)
        if (!mask_free(v, p) || !mask_free(v, d) || v.strides[p] != v.strides[d] * v.shape[d])
          merge = false;
    }
    if (merge)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  return groups;
}

// Step 2 of simplify: the kernel on the merged axes of axis_groups.
Kernel merge_axes(const Kernel& in) {
  const std::vector<std::vector<size_t>> groups = axis_groups(in);
  const size_t nglob = in.full_shape.size() - in.reduce_axes.size();
  auto regroup = [&](const ir::View& v) {
    ir::View r;
    r.offset = v.offset;
    bool masked = v.has_mask();
    for (auto& g : groups) {
      int64_t size = 1;
      for (auto d : g) size *= v.shape[d];
      r.shape.push_back(size);
      r.strides.push_back(size == 1 ? 0 : v.strides[g.back()]);
      if (masked) {
        if (g.size() == 1)
          r.mask.push_back(v.mask[g[0]]);
        else
          r.mask.push_back({0, size});
      }
    }
    // Size-1 dims that were dropped had index 0 only: nothing to add to the offset.
    return r;
  };
  std::vector<int64_t> new_red;
  for (size_t i = 0; i < groups.size(); i++)
    if (groups[i][0] >= nglob) new_red.push_back(static_cast<int64_t>(i));
  Kernel k = map_kernel(in, regroup, [&](const std::vector<int64_t>&) { return new_red; });
  ir::Shape nfs;
  for (auto& g : groups) {
    int64_t s = 1;
    for (auto d : g) s *= in.full_shape[d];
    nfs.push_back(s);
  }
  k.full_shape = nfs;
  return k;
}

// Step 3 of simplify: each nest in its own loop space, as simplify() would leave it as a kernel
// of its own.
void simplify_nests(Kernel& k) {
  std::unordered_map<const Expr*, ExprRef> memo;
  for (const Expr* n : kernel_nests(k)) {
    Kernel sub = simplify(nest_kernel(k, *n));
    auto r = std::make_shared<Expr>(*sub.value);
    r->nested = true;
    r->nest_shape = sub.full_shape;
    memo[n] = r;
  }
  std::function<ExprRef(const ExprRef&)> swap = [&](const ExprRef& e) -> ExprRef {
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second;
    auto c = std::make_shared<Expr>(*e);
    for (auto& s : c->src) s = swap(s);
    memo[e.get()] = c;
    return c;
  };
  k.value = swap(k.value);
  for (auto& o : k.more_outputs) o.value = swap(o.value);
}

// Step 4 of simplify: an elementwise kernel whose accesses disagree on the contiguous axis, some
// walking the last axis (the vectorised loop) with unit stride and one walking an outer axis d
// with unit stride and the last one with a wide stride (a residual add that reads a
// convolution's channels-last [H W, C] output into NCHW, stride C), walks d in blocks of
// kTransposeBlock just outside the last loop: [.., d, .., last] -> [.., d / B, .., B, last]. The
// transposed access then reads B neighbours of each cache line while its lines stay in L1,
// instead of one element per line with the whole operand read again for each index of d.
// ResNet-18's first residual add-relu at AVX2, one thread, the generated code alone on random
// data: 0.67 -> 0.48 ms; SqueezeNet's Fire concatenations in the network (E_128_3025 ->
// E_8_16_3025, with render_c.cpp's hidden strides): 0.53-0.71 -> 0.27-0.36 ms, loaded machine.
constexpr int64_t kTransposeBlock = 16;  // floats of a 64-byte line
constexpr int64_t kWideStride = 8;       // the narrowest stride that skips whole lines soon

std::vector<ir::View> all_views(const Kernel& k) {
  std::vector<ir::View> views{k.out_view};
  for_each_view(*k.value, [&](const ir::View& v) { views.push_back(v); });
  for (auto& o : k.more_outputs) {
    for_each_view(*o.value, [&](const ir::View& v) { views.push_back(v); });
    views.push_back(o.view);
  }
  return views;
}

// Whether view v's mask along axis d keeps to whole blocks (a concatenation of pieces of
// multiples of the block: SqueezeNet's Fire modules' two expand convolutions).
bool block_aligned(const ir::View& v, size_t d) {
  return mask_free(v, d) ||
         (v.mask[d].first % kTransposeBlock == 0 && v.mask[d].second % kTransposeBlock == 0);
}

// The axis to block, or n (none): the first with unit stride in a transposed access, a multiple
// of the block (at least two blocks where it is the thread pool's axis 0), masked in whole blocks
// only.
size_t transposed_axis(const Kernel& k) {
  const size_t n = k.full_shape.size();
  if (!k.reduce_axes.empty() || n < 2 || k.full_shape[n - 1] < kWideStride ||
      !kernel_nests(k).empty())
    return n;
  const std::vector<ir::View> views = all_views(k);
  auto wide = [](int64_t s) { return s >= kWideStride || s <= -kWideStride; };
  if (std::none_of(views.begin(), views.end(),
                   [&](const ir::View& v) { return v.strides[n - 1] == 1; }))
    return n;
  for (size_t d = 0; d + 1 < n; d++) {
    const int64_t size = k.full_shape[d];
    if (size % kTransposeBlock || (d == 0 && size < 2 * kTransposeBlock)) continue;
    bool transposed = false, aligned = true;
    for (auto& v : views) {
      transposed |= v.strides[d] == 1 && wide(v.strides[n - 1]);
      aligned &= block_aligned(v, d);
    }
    if (transposed && aligned) return d;
  }
  return n;
}

Kernel block_transposed_axis(const Kernel& in) {
  const size_t n = in.full_shape.size(), d = transposed_axis(in);
  if (d == n) return in;
  const int64_t B = kTransposeBlock;
  auto split = [&](const ir::View& v) {
    ir::View r;
    r.offset = v.offset;
    auto axis = [&](int64_t size, int64_t stride, std::pair<int64_t, int64_t> m) {
      r.shape.push_back(size);
      r.strides.push_back(stride);
      if (v.has_mask()) r.mask.push_back(m);
    };
    for (size_t i = 0; i < n; i++) {
      if (i + 1 == n) axis(B, v.strides[d], {0, B});
      if (i == d)
        axis(v.shape[d] / B, v.strides[d] * B,
             v.has_mask() ? std::pair{v.mask[d].first / B, v.mask[d].second / B}
                          : std::pair<int64_t, int64_t>{});
      else
        axis(v.shape[i], v.strides[i], v.has_mask() ? v.mask[i] : std::pair<int64_t, int64_t>{});
    }
    return r;
  };
  Kernel k = map_kernel(in, split, [](const std::vector<int64_t>& a) { return a; });
  k.full_shape = split(ir::View{in.full_shape, in.out_view.strides, 0, {}}).shape;
  return k;
}

}  // namespace

Kernel simplify(const Kernel& in) {
  Kernel k = merge_axes(reduce_axes_last(in));
  if (!kernel_nests(k).empty()) simplify_nests(k);
  return block_transposed_axis(k);
}

}  // namespace ember::schedule
