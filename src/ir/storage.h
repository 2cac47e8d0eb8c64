// Storage: the memory behind a realized tensor (a BUFFER node). Host memory, 64-byte aligned, so
// both the cpu and the interp device use it directly. Allocated on first use.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ember/dtype.h"

namespace ember::ir {

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
  /// The memory, allocated (uninitialised) on first call.
  void* data();
  /// True for the small key buffers of random ops (the jit refreshes them on replay).
  bool is_rng_key = false;
  /// Random numbers drawn with this key (the counter advance a replay must make).
  int64_t rng_draws = 0;
  /// The id the next Storage will get (storages created after this point have ids >= it).
  static uint64_t next_id();

 private:
  uint64_t id_;
  ScalarType dtype_;
  int64_t numel_;
  void* data_ = nullptr;
};

}  // namespace ember::ir
