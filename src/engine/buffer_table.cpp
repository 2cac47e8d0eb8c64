#include "engine/buffer_table.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/error.h"
#include "ember/support/spin_lock.h"

namespace ember::engine {

namespace {

struct Entry {
  StorageRef storage;
  ir::NodeRef origin;
  bool static_data = false;  // set_static
};

// The maps' element blocks, recycled per thread: an eager call adds and removes an entry or two,
// and malloc and free cost more than the map operations themselves. A block freed on another
// thread joins that thread's list (all are ::operator new blocks of one size).
struct BlockList {
  static constexpr size_t kMax = 256;
  std::vector<void*> blocks;
  size_t size = 0;  // of the blocks held (0: none yet)
  ~BlockList() {
    for (void* p : blocks) ::operator delete(p);
    gone() = true;
  }
  // Trivially destructible: readable after the list is destroyed (thread exit).
  static bool& gone() {
    thread_local bool g = false;
    return g;
  }
  static BlockList* get() {
    if (gone()) return nullptr;
    thread_local BlockList l;
    return &l;
  }
};

template <class T>
struct PooledAlloc {
  using value_type = T;
  PooledAlloc() = default;
  template <class U>
  PooledAlloc(const PooledAlloc<U>&) {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) {
    if (BlockList* l = n == 1 ? BlockList::get() : nullptr;
        l && !l->blocks.empty() && l->size == sizeof(T)) {
      void* p = l->blocks.back();
      l->blocks.pop_back();
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    BlockList* l = n == 1 ? BlockList::get() : nullptr;
    if (l && (l->size == 0 || l->size == sizeof(T)) && l->blocks.size() < BlockList::kMax) {
      l->size = sizeof(T);
      l->blocks.push_back(p);
      return;
    }
    ::operator delete(p);
  }
  friend bool operator==(const PooledAlloc&, const PooledAlloc&) { return true; }
};

using Map = std::unordered_map<const ir::Node*, Entry, std::hash<const ir::Node*>,
                               std::equal_to<const ir::Node*>,
                               PooledAlloc<std::pair<const ir::Node* const, Entry>>>;

// Shards chosen by the node's address, each under a spin lock held for one map operation (an
// eager call adds and removes one or two entries). std::unordered_map keeps its elements in
// place as it grows, so a reference to an entry stays valid while its node lives.
constexpr size_t kShards = 16;
struct alignas(64) Shard {
  support::SpinLock mu;
  Map map;
};
// Never destroyed: nodes (and so entries) may outlive static destruction.
Shard* shards() {
  static Shard* s = new Shard[kShards];
  return s;
}
Shard& shard_of(const ir::Node* n) {
  return shards()[(reinterpret_cast<uintptr_t>(n) >> 6) % kShards];
}

// The node's last release (ir::set_buffer_release): its entry leaves the table, and what the
// entry held is dropped after the lock (dropping an origin may release more BUFFER nodes).
void release(const ir::Node& n) noexcept {
  Shard& sh = shard_of(&n);
  Map::node_type gone;
  {
    std::lock_guard<support::SpinLock> l(sh.mu);
    gone = sh.map.extract(&n);
  }
  if (gone) gone.mapped().storage->remove_node(&n);
}

const Entry& entry_of(const ir::Node& n) {
  Shard& sh = shard_of(&n);
  std::lock_guard<support::SpinLock> l(sh.mu);
  auto it = sh.map.find(&n);
  if (it == sh.map.end())
    throw Error("internal error: " + n.str() + " is not a buffer of the engine's buffer table");
  return it->second;
}

}  // namespace

ir::NodeRef make_buffer(StorageRef storage, DimVector shape) {
  static const bool registered = (ir::set_buffer_release(&release), true);
  (void)registered;
  ir::NodeRef n =
      ir::make_buffer_node(storage->id(), storage->version(), storage->dtype(), std::move(shape));
  Shard& sh = shard_of(n.get());
  bool added;
  {
    std::lock_guard<support::SpinLock> l(sh.mu);
    added = sh.map.try_emplace(n.get(), Entry{storage, nullptr}).second;
  }
  // The id is unique, so an existing node (found by interning) already reads this storage.
  if (added) storage->add_node(n.get());
  return n;
}

const StorageRef& storage_of(const ir::Node& buffer) { return entry_of(buffer).storage; }

void check_current(const ir::Node& buffer) {
  const runtime::Storage& s = *storage_of(buffer);
  if (ir::buffer_version(buffer) != s.version())
    throw Error("internal error: a lazy tensor reads " + buffer.str() + " at version " +
                std::to_string(ir::buffer_version(buffer)) +
                ", but that buffer was overwritten in place without keeping a copy (now version " +
                std::to_string(s.version()) + ")");
}

ir::NodeRef origin_of(const ir::Node& buffer) { return entry_of(buffer).origin; }

void set_origin(const ir::Node& buffer, ir::NodeRef origin) {
  Shard& sh = shard_of(&buffer);
  ir::NodeRef old;  // dropped after the lock
  std::lock_guard<support::SpinLock> l(sh.mu);
  auto it = sh.map.find(&buffer);
  if (it == sh.map.end())
    throw Error("internal error: " + buffer.str() +
                " is not a buffer of the engine's buffer table");
  old = std::exchange(it->second.origin, std::move(origin));
}

void set_static(const ir::Node& buffer) {
  Shard& sh = shard_of(&buffer);
  std::lock_guard<support::SpinLock> l(sh.mu);
  auto it = sh.map.find(&buffer);
  if (it == sh.map.end())
    throw Error("internal error: " + buffer.str() +
                " is not a buffer of the engine's buffer table");
  it->second.static_data = true;
}

bool is_static(const ir::Node& buffer) { return entry_of(buffer).static_data; }

void redirect(const ir::Node& buffer, StorageRef copy) {
  Shard& sh = shard_of(&buffer);
  StorageRef from;
  {
    std::lock_guard<support::SpinLock> l(sh.mu);
    auto it = sh.map.find(&buffer);
    if (it == sh.map.end())
      throw Error("internal error: " + buffer.str() +
                  " is not a buffer of the engine's buffer table");
    from = std::exchange(it->second.storage, copy);
  }
  // The node moves from one storage's list of readers to the other's.
  from->remove_node(&buffer);
  copy->add_node(&buffer);
}

size_t buffer_table_size() {
  size_t n = 0;
  for (size_t i = 0; i < kShards; i++) {
    std::lock_guard<support::SpinLock> l(shards()[i].mu);
    n += shards()[i].map.size();
  }
  return n;
}

}  // namespace ember::engine
