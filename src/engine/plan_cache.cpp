#include "engine/plan_cache.h"

#include <atomic>
#include <cstring>
#include <list>
#include <mutex>
#include <unordered_map>

#include "ember/support/splitmix64.h"

namespace ember::engine {

namespace {

size_t mix(size_t h, uint64_t v) { return support::hash_combine(h, v); }

// Pointer -> position, reused between builds (its cells are cleared by a generation count, not
// freed): the key walk of a small graph allocates nothing.
class PtrIndex {
 public:
  void reset() {
    if (++gen_ == 0) {  // wrapped: old cells could look current
      for (auto& c : cells_) c.gen = 0;
      gen_ = 1;
    }
    used_ = 0;
  }
  // The value of `key`, inserting `value` when it is absent (then `inserted` is true).
  [[gnu::always_inline]] int32_t& get(const void* key, int32_t value, bool& inserted) {
    if ((used_ + 1) * 2 > cells_.size()) grow();
    size_t mask = cells_.size() - 1;
    for (size_t i = std::hash<const void*>{}(key)*support::kSplitMix64Gamma >> 7 & mask;;
         i = (i + 1) & mask) {
      Cell& c = cells_[i];
      if (c.gen != gen_) {
        c = {key, gen_, value};
        used_++;
        inserted = true;
        return c.value;
      }
      if (c.key == key) {
        inserted = false;
        return c.value;
      }
    }
  }

 private:
  struct Cell {
    const void* key = nullptr;
    uint32_t gen = 0;
    int32_t value = 0;
  };
  void grow() {
    std::vector<Cell> old = std::move(cells_);
    cells_.assign(std::max<size_t>(64, old.size() * 2), Cell{});
    const uint32_t g = gen_;
    gen_ = 1;
    used_ = 0;
    bool ins;
    for (auto& c : old)
      if (c.gen == g) get(c.key, c.value, ins);
  }
  std::vector<Cell> cells_;
  uint32_t gen_ = 1;
  size_t used_ = 0;
};

// The walk's state, reused between builds. A stack entry: the node, its next source, and whether
// it is in t_nodes (a node reached by its only reference is not: see build()).
struct WalkEntry {
  const ir::Node* node;
  uint32_t next_src;
  bool indexed;
};
thread_local PtrIndex t_nodes, t_storages;
thread_local std::vector<WalkEntry> t_stack;
thread_local std::vector<int32_t> t_done;  // positions of the sources met so far, in walk order

bool same_tokens(const std::vector<int64_t>& a, std::span<const int64_t> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), b.size_bytes()) == 0;
}

// Copies a node's few shape or argument values into the key (at most DimVector::kInline of them
// without a loop): std::copy calls memmove, which costs more than the copy, twice per node.
[[gnu::always_inline]] inline int64_t* copy_tokens(const int64_t* v, size_t n, int64_t* t) {
  if (n > DimVector::kInline) return std::copy(v, v + n, t);
#pragma GCC unroll 6
  for (size_t i = 0; i < DimVector::kInline; i++)
    if (i < n) t[i] = v[i];
  return t + n;
}

// Counts the plans that left the cache (evicted or cleared): a thread's last plan (below) is used
// only while no plan has left since it was found, so a cleared cache misses on every thread.
std::atomic<uint64_t> g_removals{0};

struct Entry {
  std::vector<int64_t> tokens;
  std::string device;
  size_t hash;
  std::shared_ptr<const Plan> plan;
};

struct Cache {
  std::mutex mu;
  std::list<Entry> lru;  // most recently used first
  std::unordered_multimap<size_t, std::list<Entry>::iterator> by_hash;
  size_t bytes = 0;

  std::list<Entry>::iterator find(const GraphKey& k) {
    auto [b, e] = by_hash.equal_range(k.hash());
    for (auto it = b; it != e; ++it)
      if (same_tokens(it->second->tokens, k.tokens()) && it->second->device == k.device())
        return it->second;
    return lru.end();
  }
  void evict_last() {
    auto last = std::prev(lru.end());
    auto [b, e] = by_hash.equal_range(last->hash);
    for (auto it = b; it != e; ++it)
      if (it->second == last) {
        by_hash.erase(it);
        break;
      }
    bytes -= last->plan->bytes;
    lru.pop_back();
    g_removals.fetch_add(1, std::memory_order_release);
  }
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: programs may be launched at exit
  return *c;
}

// The last plan this thread used and its key: a repeated eager call finds it without the cache's
// lock, its hash lookup and its recency update, and without taking a reference on the plan (all
// of them in the critical path of a call of a few microseconds, issue 11). find_plan moves the
// plan out (a nested realize on this thread then uses the cache) and done_with_plan puts it back.
struct LastPlan {
  std::vector<int64_t> tokens;
  std::string device;
  uint64_t removals = 0;  // g_removals when the plan was found in the cache
  std::shared_ptr<const Plan> plan;
};
thread_local LastPlan t_last;
thread_local uint64_t t_found_removals = 0;  // g_removals at this thread's last find_plan
thread_local const Plan* t_taken = nullptr;  // the plan find_plan last moved out of t_last

// Compared token by token, without hashing the key first: the hash (a pass over every token)
// would cost as much as the comparison, and a repeated call is a hit.
bool is_last_key(const GraphKey& k) {
  return same_tokens(t_last.tokens, k.tokens()) && t_last.device == k.device();
}

}  // namespace

void GraphKey::push_storage(const StorageRef& s) {
  bool fresh;
  const int32_t slot = t_storages.get(s.get(), static_cast<int32_t>(storages_.size()), fresh);
  int64_t* t = room(4);
  t[0] = slot;
  t[1] = fresh;
  len_ += 2;
  if (fresh) {
    storages_.push_back(&s);
    // Where it lives is part of the key: a list's new buffers live there too (LaunchList::place).
    t[2] = static_cast<int64_t>(s->dtype()) | (s->device() ? int64_t{1} << 32 : 0);
    t[3] = s->numel();
    len_ += 2;
  }
}

// Inlined into build's walk: as a call, its entry and exit (register saves for the pointers that
// the walk keeps) cost as much as the tokens it writes, once per node of every eager call.
[[gnu::always_inline]] inline bool GraphKey::emit(const ir::Node* n, const int32_t* srcs) {
  const size_t ns = n->src.size(), na = n->arg.ints.size(), nd = n->shape.size();
  int64_t* t = room(6 + nd + ns + na);
  int64_t* const t0 = t;
  *t++ = static_cast<int64_t>(n->op);
  *t++ = static_cast<int64_t>(n->dtype);
  // make_node infers every other op's shape from its op, sources and argument: only these three
  // take theirs as given.
  const bool buffer = n->op == ir::Op::BUFFER;
  if (buffer || n->op == ir::Op::CONST || n->op == ir::Op::RAND) {
    *t++ = static_cast<int64_t>(nd);
    t = copy_tokens(n->shape.data(), nd, t);
  }
  if (!buffer) {
    *t++ = static_cast<int64_t>(ns);
    t = std::copy(srcs, srcs + ns, t);
    *t++ = static_cast<int64_t>(na);
    t = copy_tokens(n->arg.ints.data(), na, t);
    int64_t bits;
    std::memcpy(&bits, &n->arg.f, sizeof bits);
    *t++ = bits;
  }
  len_ += static_cast<size_t>(t - t0);
  if (!buffer) return true;
  // arg holds the buffer's id and version: not part of the key
  const StorageRef& s = storage_of(*n);
  if (ir::buffer_version(*n) != s->version()) return false;
  push_storage(s);
  return true;
}

bool GraphKey::build(const std::vector<Root>& roots, const std::string& device) {
  len_ = 0;
  hash_ = 0;  // computed on demand (hash()): a repeated eager call is found without it
  storages_.clear();
  if (device_ != device || device_hash_ == 0) {
    device_ = device;
    device_hash_ = std::hash<std::string>{}(device_) | 1;
  }
  // The thread's walk state, looked up once (each access to a thread_local checks its guard).
  PtrIndex& nodes = t_nodes;
  std::vector<WalkEntry>& stack = t_stack;
  std::vector<int32_t>& done_pos = t_done;
  nodes.reset();
  t_storages.reset();
  int32_t next = 0;
  // Each node's tokens after its sources' (a post-order walk from the roots): every list is
  // preceded by its length, so equal token lists are equal graphs. A node's position is known
  // once it is emitted; as the graph is acyclic, a source met again is already emitted, so one
  // probe per edge finds it (done_pos collects the positions of a node's sources in order).
  // A source whose count is 1 has no other reference than this edge (every edge of the graph is
  // a counted reference, alive for the whole walk, so its count never drops below its edges):
  // it is met once, and neither probed nor indexed. Most of an eager call's nodes are such.
  // The stack and the positions are plain arrays in the thread's vectors (grown when full): the
  // walk is on every eager call's path, and push_back's checks cost as much as the rest of a step.
  WalkEntry* st = stack.data();
  size_t sp = 0, st_cap = stack.size();
  int32_t* dp = done_pos.data();
  size_t dn = 0, dp_cap = done_pos.size();
  auto push_node = [&](const ir::Node* n, bool indexed) {
    if (sp == st_cap) {
      stack.resize(2 * st_cap + 64);
      st = stack.data();
      st_cap = stack.size();
    }
    st[sp++] = {n, 0, indexed};
  };
  auto push_pos = [&](int32_t p) {
    if (dn == dp_cap) {
      done_pos.resize(2 * dp_cap + 64);
      dp = done_pos.data();
      dp_cap = done_pos.size();
    }
    dp[dn++] = p;
  };
  for (auto& r : roots) {
    bool fresh;
    nodes.get(r.node.get(), -1, fresh);
    if (!fresh) continue;
    sp = 0;
    dn = 0;
    push_node(r.node.get(), true);
    while (sp != 0) {
      WalkEntry& e = st[sp - 1];
      if (e.next_src < e.node->src.size()) {
        const ir::Node* s = e.node->src[e.next_src++].get();
        if (s->refs.load(std::memory_order_relaxed) == 1) {
          push_node(s, false);
          continue;
        }
        const int32_t pos = nodes.get(s, -1, fresh);
        if (fresh)
          push_node(s, true);
        else
          push_pos(pos);
      } else {
        const ir::Node* done = e.node;
        const bool indexed = e.indexed;
        sp--;
        const size_t ns = done->src.size();
        if (!emit(done, dp + dn - ns)) return false;
        dn -= ns;
        if (indexed) {
          bool ins;
          nodes.get(done, -1, ins) = next;
        }
        push_pos(next++);
      }
    }
  }
  int64_t* t = room(1 + roots.size());
  *t = static_cast<int64_t>(roots.size());
  len_++;
  for (auto& r : roots) {
    bool ins;
    *room(1) = nodes.get(r.node.get(), -1, ins);
    len_++;
    if (r.target) {
      push_storage(r.target);
    } else {
      *room(1) = -1;
      len_++;
    }
  }
  return true;
}

size_t GraphKey::hash() const {
  if (hash_ != 0) return hash_;
  // Four independent multiply-xor lanes: a serial chain over every token would cost more than the
  // rest of the walk.
  constexpr uint64_t kMul = 0x9fb21c651e98df25ULL;
  uint64_t lane[4] = {device_hash_, 1, 2, 3};
  const int64_t* tok = tokens_.data();
  const size_t n = len_;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (size_t j = 0; j < 4; j++) lane[j] = (lane[j] ^ static_cast<uint64_t>(tok[i + j])) * kMul;
  for (; i < n; i++) lane[0] = (lane[0] ^ static_cast<uint64_t>(tok[i])) * kMul;
  size_t h = n;
  for (uint64_t l : lane) h = mix(h, l ^ (l >> 29));
  hash_ = h | 1;  // never 0 (0: not computed yet)
  return hash_;
}

std::shared_ptr<const Plan> find_plan(const GraphKey& key) {
  t_found_removals = g_removals.load(std::memory_order_acquire);
  if (t_last.plan && t_last.removals == t_found_removals && is_last_key(key)) {
    t_taken = t_last.plan.get();
    return std::move(t_last.plan);
  }
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.find(key);
  if (it == c.lru.end()) return nullptr;
  if (it != c.lru.begin()) c.lru.splice(c.lru.begin(), c.lru, it);
  return it->plan;
}

void done_with_plan(const GraphKey& key, std::shared_ptr<const Plan> plan) {
  if (!plan) return;
  // The usual case: the plan find_plan took from t_last, whose key is still this plan's (a
  // nested realize that kept another plan has filled t_last).
  const bool taken = !t_last.plan && plan.get() == t_taken;
  t_taken = nullptr;
  if (taken) {
    t_last.plan = std::move(plan);
    return;
  }
  t_last.tokens.assign(key.tokens().begin(), key.tokens().end());
  t_last.device = key.device();
  t_last.removals = t_found_removals;
  t_last.plan = std::move(plan);
}

void store_plan(const GraphKey& key, Plan p) {
  size_t bytes = sizeof(Entry) + sizeof(Plan) + key.tokens().size_bytes();
  for (const LaunchStep& st : p.list.steps)
    bytes += sizeof(LaunchStep) + st.slots.size() * sizeof(int32_t);
  bytes += (p.results.size() + p.list.fresh.size()) * 16;
  p.bytes = bytes;
  if (bytes > kMaxPlanBytes / 4) return;  // one huge graph must not empty the cache
  auto plan = std::make_shared<Plan>(std::move(p));

  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.find(key);
  if (it != c.lru.end()) return;  // another thread stored it meanwhile
  c.lru.push_front(
      Entry{{key.tokens().begin(), key.tokens().end()}, key.device(), key.hash(), std::move(plan)});
  c.by_hash.emplace(key.hash(), c.lru.begin());
  c.bytes += bytes;
  while (c.lru.size() > kMaxPlans || c.bytes > kMaxPlanBytes) c.evict_last();
}

std::pair<size_t, size_t> plan_cache_size() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.lru.size(), c.bytes};
}

void clear_plan_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.lru.clear();
  c.by_hash.clear();
  c.bytes = 0;
  g_removals.fetch_add(1, std::memory_order_release);
}

}  // namespace ember::engine
