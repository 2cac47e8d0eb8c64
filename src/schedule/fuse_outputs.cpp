#include "schedule/fuse_outputs.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace ember::schedule {

using ir::View;

namespace {

bool reads_buffer(const Expr& e) {
  return e.kind == Expr::Kind::Load || e.kind == Expr::Kind::Rand;
}

// The loads (and random draws, which read their key buffer) of every output value, each once.
std::vector<const Expr*> leaves(const Kernel& k) {
  std::vector<const Expr*> out;
  std::unordered_set<const Expr*> seen;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (!seen.insert(&e).second) return;
    if (reads_buffer(e)) out.push_back(&e);
    for (auto& s : e.src) walk(*s);
  };
  walk(*k.value);
  for (auto& o : k.more_outputs) walk(*o.value);
  return out;
}

// A copy of e whose buffer-reading leaves are replaced by leaf(leaf expression).
ExprRef rebuild(const ExprRef& e, const std::function<ExprRef(const ExprRef&)>& leaf,
                std::unordered_map<const Expr*, ExprRef>& memo) {
  auto it = memo.find(e.get());
  if (it != memo.end()) return it->second;
  ExprRef r;
  if (reads_buffer(*e)) {
    r = leaf(e);
  } else {
    auto n = std::make_shared<Expr>(*e);
    for (auto& s : n->src) s = rebuild(s, leaf, memo);
    r = n;
  }
  memo[e.get()] = r;
  return r;
}

ExprRef with_slot(const Expr& e, int slot) {
  auto n = std::make_shared<Expr>(e);
  n->buf = slot;
  return n;
}

// A kernel with nests (a one-element value) shares no loop space with others.
bool elementwise(const Kernel& k) {
  return k.reduce_axes.empty() && k.out_view == View::contiguous(k.full_shape) &&
         kernel_nests(k).empty();
}

// True when a view reads more than one element (a scalar broadcast shares no traffic).
bool reads_many(const View& v) {
  for (size_t d = 0; d < v.shape.size(); d++)
    if (v.shape[d] > 1 && v.strides[d] != 0) return true;
  return false;
}

struct Group {
  ScheduleItem item;
  size_t position;        // the index of its last member in the original order
  bool consumed = false;  // a later kernel reads one of its outputs
  bool alive = true;
};

// Whether item b may join group g, and whether b reads g's outputs (inlined) or shares an input.
bool can_join(const Group& g, const ScheduleItem& b) {
  const Kernel& gk = g.item.kernel;
  const Kernel& bk = b.kernel;
  if (g.consumed || !elementwise(gk) || !elementwise(bk) || gk.full_shape != bk.full_shape)
    return false;
  const size_t ng = gk.num_outputs();
  auto slot_in_g = [&](BufferName st) -> int {
    for (size_t s = 0; s < g.item.buffers.size(); s++)
      if (g.item.buffers[s] == st) return static_cast<int>(s);
    return -1;
  };
  std::vector<const Expr*> g_leaves = leaves(gk);
  bool related = false;
  for (const Expr* e : leaves(bk)) {
    int s = slot_in_g(b.buffers[e->buf]);
    if (s < 0) continue;
    if (s < static_cast<int>(ng)) {  // g's output: inlined, so only at the index g stores it
      if (e->kind != Expr::Kind::Load || !(e->view == bk.out_view)) return false;
      related = true;
    } else if (e->kind == Expr::Kind::Load && reads_many(e->view)) {
      for (const Expr* f : g_leaves)
        if (f->kind == Expr::Kind::Load && f->buf == s && f->view == e->view) related = true;
    }
  }
  return related;
}

// g's kernel with b's value as one more output (slot g.num_outputs()); b's loads of g's outputs
// become g's values.
ScheduleItem join(const ScheduleItem& g, const ScheduleItem& b) {
  const Kernel& gk = g.kernel;
  const int ng = static_cast<int>(gk.num_outputs());
  ScheduleItem m;
  m.node = b.node;
  Kernel& k = m.kernel;
  k.full_shape = gk.full_shape;
  k.out_view = gk.out_view;
  for (int s = 0; s < ng; s++) {
    m.buffers.push_back(g.buffers[s]);
    k.buffers.push_back(gk.buffers[s]);
  }
  m.buffers.push_back(b.buffers[0]);
  k.buffers.push_back(b.kernel.buffers[0]);
  for (size_t s = ng; s < g.buffers.size(); s++) {
    m.buffers.push_back(g.buffers[s]);
    k.buffers.push_back(gk.buffers[s]);
  }
  // g's inputs move one slot up (b's output slot comes first).
  std::unordered_map<const Expr*, ExprRef> gmemo;
  auto gleaf = [&](const ExprRef& e) { return e->buf >= ng ? with_slot(*e, e->buf + 1) : e; };
  std::vector<ExprRef> gv = {rebuild(gk.value, gleaf, gmemo)};
  for (auto& o : gk.more_outputs) gv.push_back(rebuild(o.value, gleaf, gmemo));
  std::unordered_map<const Expr*, ExprRef> bmemo;
  auto bleaf = [&](const ExprRef& e) -> ExprRef {
    const BufferName st = b.buffers[e->buf];
    for (int s = 0; s < ng; s++)
      if (g.buffers[s] == st) return gv[s];  // read at the stored index (can_join)
    for (size_t s = ng + 1; s < m.buffers.size(); s++)
      if (m.buffers[s] == st) return with_slot(*e, static_cast<int>(s));
    m.buffers.push_back(st);
    k.buffers.push_back(b.kernel.buffers[e->buf]);
    return with_slot(*e, static_cast<int>(m.buffers.size() - 1));
  };
  ExprRef bv = rebuild(b.kernel.value, bleaf, bmemo);
  k.value = gv[0];
  for (int s = 1; s < ng; s++) k.more_outputs.push_back({gv[s], gk.more_outputs[s - 1].view});
  k.more_outputs.push_back({bv, b.kernel.out_view});
  return m;
}

}  // namespace

void fuse_outputs(std::vector<ScheduleItem>& items) {
  std::vector<Group> groups;
  std::unordered_map<BufferName, size_t> producer;              // output buffer -> group
  std::unordered_map<BufferName, std::vector<size_t>> readers;  // input buffer -> groups
  for (size_t i = 0; i < items.size(); i++) {
    ScheduleItem& b = items[i];
    const size_t nb = b.kernel.num_outputs();
    // Candidates: the groups that produce what b reads, then those that read what b reads.
    std::vector<size_t> cands;
    for (size_t s = nb; s < b.buffers.size(); s++)
      if (auto it = producer.find(b.buffers[s]); it != producer.end()) cands.push_back(it->second);
    for (size_t s = nb; s < b.buffers.size(); s++)
      if (auto it = readers.find(b.buffers[s]); it != readers.end())
        for (auto it2 = it->second.rbegin(); it2 != it->second.rend(); ++it2) cands.push_back(*it2);
    size_t target = groups.size();
    for (size_t c : cands)
      if (groups[c].alive && can_join(groups[c], b)) {
        target = c;
        break;
      }
    if (target == groups.size()) {
      groups.push_back({std::move(b), i});
    } else {
      groups[target].item = join(groups[target].item, b);
      groups[target].position = i;
    }
    const ScheduleItem& now = groups[target].item;
    const size_t nout = now.kernel.num_outputs();
    for (size_t s = 0; s < nout; s++) producer[now.buffers[s]] = target;
    for (size_t s = nout; s < now.buffers.size(); s++) {
      auto& r = readers[now.buffers[s]];
      if (r.empty() || r.back() != target) r.push_back(target);
      // A group whose output another kernel reads stays where it is.
      if (auto it = producer.find(now.buffers[s]); it != producer.end() && it->second != target)
        groups[it->second].consumed = true;
    }
  }
  std::vector<Group*> order;
  for (auto& g : groups) order.push_back(&g);
  std::sort(order.begin(), order.end(),
            [](const Group* a, const Group* b) { return a->position < b->position; });
  items.clear();
  for (auto* g : order) items.push_back(std::move(g->item));
}

bool reads_only_at(const Kernel& k, int slot, const View& v) {
  for (const Expr* e : leaves(k))
    if (e->buf == slot && !(e->kind == Expr::Kind::Load && e->view == v)) return false;
  return true;
}

void alias_inputs_to_outputs(ScheduleItem& item) {
  Kernel& k = item.kernel;
  const int nout = static_cast<int>(k.num_outputs());
  std::vector<int> to(item.buffers.size());  // old slot -> new slot
  std::vector<BufferName> bufs;
  std::vector<KernelBuffer> kbufs;
  bool changed = false;
  for (size_t s = 0; s < item.buffers.size(); s++) {
    int alias = -1;
    if (static_cast<int>(s) >= nout)
      for (int o = 0; o < nout && alias < 0; o++)
        if (item.buffers[o] == item.buffers[s]) alias = o;
    if (alias >= 0) {
      to[s] = alias;
      changed = true;
      continue;
    }
    to[s] = static_cast<int>(bufs.size());
    bufs.push_back(item.buffers[s]);
    kbufs.push_back(k.buffers[s]);
  }
  if (!changed) return;
  std::unordered_map<const Expr*, ExprRef> memo;
  auto leaf = [&](const ExprRef& e) { return with_slot(*e, to[e->buf]); };
  k.value = rebuild(k.value, leaf, memo);
  for (auto& o : k.more_outputs) o.value = rebuild(o.value, leaf, memo);
  k.buffers = std::move(kbufs);
  item.buffers = std::move(bufs);
}

}  // namespace ember::schedule
