#include "codegen/opt.h"

#include <sstream>

namespace ember::codegen {

using schedule::Expr;

std::string Opts::str() const {
  std::ostringstream o;
  for (auto& a : actions)
    o << (a.kind == ActionKind::Upcast ? "UPCAST" : "UNROLL") << "(" << a.axis << "," << a.amount << ") ";
  return o.str();
}

std::vector<int64_t> Opts::upcasts(size_t rank) const {
  std::vector<int64_t> u(rank, 1);
  for (auto& a : actions)
    if (a.kind == ActionKind::Upcast) u[a.axis] *= a.amount;
  return u;
}

int Opts::unroll() const {
  int u = 1;
  for (auto& a : actions)
    if (a.kind == ActionKind::Unroll) u *= a.amount;
  return u;
}

namespace {

void loads(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == Expr::Kind::Load) out.push_back(&e);
  for (auto& s : e.src) loads(*s, out);
}

int pick(int64_t size, std::initializer_list<int> choices) {
  for (int c : choices)
    if (size % c == 0 && size >= c) return c;
  return 1;
}

}  // namespace

Opts heuristic(const schedule::Kernel& k) {
  Opts o;
  if (k.reduce_axes.empty()) return o;  // elementwise: a plain inner loop vectorises well
  size_t rank = k.full_shape.size();
  size_t nglob = rank - k.reduce_axes.size();
  std::vector<const Expr*> ls;
  loads(*k.value, ls);
  size_t last_red = rank - 1;
  bool reduce_contiguous = false;
  for (auto* l : ls)
    if (l->view.strides[last_red] == 1) reduce_contiguous = true;
  bool out_vector_axis = false;
  if (nglob > 0)
    for (auto* l : ls)
      if (l->view.strides[nglob - 1] == 1) out_vector_axis = true;

  if (nglob >= 1 && out_vector_axis) {
    // Register tile: a vector's worth of the last output axis times a few rows of another.
    int u = pick(k.full_shape[nglob - 1], {16, 8, 4});
    if (u > 1) o.actions.push_back({ActionKind::Upcast, static_cast<int>(nglob - 1), u});
    if (nglob >= 2) {
      int r = pick(k.full_shape[nglob - 2], {8, 4, 2});
      if (r > 1) o.actions.push_back({ActionKind::Upcast, static_cast<int>(nglob - 2), r});
    }
    return o;
  }
  if (reduce_contiguous) {
    int u = pick(k.full_shape[last_red], {16, 8, 4});
    if (u > 1) o.actions.push_back({ActionKind::Unroll, static_cast<int>(last_red), u});
  }
  return o;
}

}  // namespace ember::codegen
