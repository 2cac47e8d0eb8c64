// The plan cache (issue 11): a realize's schedule and programs, kept by the shape of its graph, so
// that a repeated eager call (the same ops on new inputs, such as a rollout's actor forward) skips
// scheduling, lowering, simplification and kernel keys, and only allocates its new buffers and
// launches.
//
// The key is the graph below the roots with buffers named by position instead of identity: every
// node's op, dtype, shape (where make_node does not infer it), argument and sources (as positions
// in a walk from the roots); for a BUFFER, its storage as the position of that storage's first
// appearance (so which inputs share a buffer is part of the key) with the storage's dtype and size;
// each root and its in-place target (named like a storage); and the device. Graphs with one key are
// the same computation on renamed buffers, so every decision of the scheduler (fusion, what is
// materialised, writing a target in place or through a copy, multi-output fusion) made for one
// holds for the other. Constants are compared by their bits, so a different constant is a different
// key.
//
// Bounded: at most kMaxPlans plans and about kMaxBytes of keys and plans; the least recently used
// go first. DEBUG=1 prints "plan cache hit" or "miss" on each realize's line; RuntimeStats counts
// both.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/launch_list.h"

namespace ember::engine {

/// A realize's engine roots: a value, and where an in-place assignment writes it.
struct Root {
  ir::NodeRef node;
  StorageRef target;  // null: a new buffer
};

/// What a realize of the key's graph runs: its launch list, whose bound slots are the key's
/// storages in order (a graph buffer or an in-place target), and the slot of each root's value.
struct Plan {
  LaunchList list;
  std::vector<int32_t> results;  // per root
  int materialised_extra = 0;
  size_t bytes = 0;  // the plan's and its key's approximate size (for the bound)
};

/// The key of one realize's graph and the storages it names (valid while the roots are alive).
class GraphKey {
 public:
  /// Builds the key; false when the graph is not planned from the cache (a buffer that is read
  /// at an overwritten version: the scheduler reports that).
  bool build(const std::vector<Root>& roots, const std::string& device);
  /// The key's storages, by position: a plan's bound slots.
  std::span<const StorageRef* const> storages() const { return storages_; }
  /// The tokens' hash, computed on the first call after build().
  size_t hash() const;
  std::span<const int64_t> tokens() const { return {tokens_.data(), len_}; }
  const std::string& device() const { return device_; }

 private:
  // Room for n more tokens at end(): the walk writes through a pointer, not push_back (the key of
  // an eager call is built on every call).
  int64_t* room(size_t n) {
    if (len_ + n > tokens_.size()) tokens_.resize(std::max(2 * tokens_.size(), len_ + n + 64));
    return tokens_.data() + len_;
  }
  // Appends a storage's position, and at its first appearance its dtype and size.
  void push_storage(const StorageRef& s);
  // Appends node n's tokens; `srcs` holds its sources' positions. False: see build().
  bool emit(const ir::Node* n, const int32_t* srcs);
  std::vector<int64_t> tokens_;  // the first len_ are the key's; the rest is room
  size_t len_ = 0;
  mutable size_t hash_ = 0;  // 0: not computed since build()
  std::string device_;
  size_t device_hash_ = 0;
  std::vector<const StorageRef*> storages_;
};

/// The plan stored for `key`, or null. The plan this thread used last is tried first (no lock):
/// give each plan found back with done_with_plan when its run is done.
std::shared_ptr<const Plan> find_plan(const GraphKey& key);
/// Keeps `plan` (found for `key`) as this thread's last plan.
void done_with_plan(const GraphKey& key, std::shared_ptr<const Plan> plan);
/// Stores the plan of a realize of the key's graph.
void store_plan(const GraphKey& key, Plan plan);
/// Plans held and their approximate bytes.
std::pair<size_t, size_t> plan_cache_size();
void clear_plan_cache();

inline constexpr size_t kMaxPlans = 1024;
inline constexpr size_t kMaxPlanBytes = size_t{64} << 20;

}  // namespace ember::engine
