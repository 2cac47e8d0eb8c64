// Storage: the memory behind a realized tensor (a BUFFER node). Host memory, 64-byte aligned, so
// both the cpu and the interp device use it directly. Allocated on first use.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ember/dtype.h"
#include "ember/support/spin_lock.h"

namespace ember::ir {

struct Node;
class NodeRef;

class Storage {
 public:
  Storage(ScalarType dtype, int64_t numel);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  uint64_t id() const { return id_; }
  ScalarType dtype() const { return dtype_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size(dtype_); }
  bool allocated() const { return data_ != nullptr; }
  /// The memory, allocated (uninitialised) on first call. While the engine holds deferred kernel
  /// launches it has set a hook (set_before_data_hook) that runs them first, so whoever reads or
  /// writes the memory sees the data those launches produce.
  void* data();
  /// Called at the start of every data() while set (nullptr: none).
  static void set_before_data_hook(void (*hook)());
  /// True for the small key buffers of random ops (the jit refreshes them on replay).
  bool is_rng_key = false;
  /// Random numbers drawn with this key (the counter advance a replay must make).
  int64_t rng_draws = 0;
  /// The id the next Storage will get (storages created after this point have ids >= it).
  static uint64_t next_id();

  /// Counts the in-place overwrites of the data (realized assignments, checkpoint loads). A
  /// BUFFER node records the version it reads; a node whose version is behind has lost its data
  /// (ember::overwrite_in_place keeps a copy for every reader that is still alive).
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }
  void set_version(uint64_t v) { version_ = v; }
  /// The live BUFFER nodes that read this storage (make_buffer registers them, ~Node removes
  /// them; a node whose last reference is gone is not returned).
  void add_node(const Node* n);
  void remove_node(const Node* n);
  std::vector<NodeRef> live_nodes();

 private:
  uint64_t id_;
  uint64_t version_ = 0;
  // The readers, as plain pointers (see live_nodes): the first in its own slot, the rest after it
  // in order. Almost every storage has one reader (an eager call's output buffer): its node is
  // registered and removed without allocating, under a spin lock (not a std::mutex's calls).
  support::SpinLock nodes_mu_;
  const Node* first_node_ = nullptr;
  std::vector<const Node*> more_nodes_;
  ScalarType dtype_;
  int64_t numel_;
  void* data_ = nullptr;
};

}  // namespace ember::ir
