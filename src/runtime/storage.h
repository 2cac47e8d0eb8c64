// Storage: the memory behind a buffer. Host memory (64-byte aligned, used directly by the cpu and
// interp devices), or the memory of a device that has its own (opencl: Tensor::to), with a host
// copy made when host code reads the data. Allocated on first use. The graph names a buffer by its
// id and the version of the data it reads (ir/node.h, BUFFER); the engine's buffer table
// (engine/buffer_table.h) maps those nodes to storages.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ember/dtype.h"
#include "ember/support/spin_lock.h"
#include "runtime/device.h"

namespace ember::ir {
struct Node;
class NodeRef;
}  // namespace ember::ir

namespace ember::runtime {

class Storage {
 public:
  /// `device`: the device whose memory holds the data; null for host memory (cpu, interp).
  Storage(ScalarType dtype, int64_t numel, Device* device = nullptr);
  /// A host storage over memory that ember did not allocate (ember::from_blob with a deleter):
  /// `data` holds numel elements of dtype, aligned to the element size; `owner` keeps it alive
  /// and is released (its deleter run) when the storage dies. Never freed by host_free.
  Storage(ScalarType dtype, int64_t numel, void* data, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// Unique for the process (never reused), counted from 1: BUFFER nodes name a storage by it.
  uint64_t id() const { return id_; }
  ScalarType dtype() const { return dtype_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size(dtype_); }
  bool allocated() const { return data_ != nullptr || buf_.handle != nullptr; }
  /// The device whose memory holds the data (null: host memory).
  Device* device() const { return device_; }
  /// The host memory, allocated (uninitialised) on first call. Reading it does not wait for
  /// kernels that the engine holds back (engine::DeferLaunches): host code that reads data calls
  /// engine::sync() first (the tensor layer's data accessors do). Of a device storage: the host
  /// copy, copied out when a launch wrote the device's since; the caller may write it, so the
  /// next device_buffer() copies it in again (host_read() does not).
  void* data();
  /// data() for a read only: the device's copy stays current.
  const void* host_read();
  /// A device storage's buffer in its device's memory, allocated on first call; copied in when
  /// the host copy is newer (written through data()).
  DeviceBuffer device_buffer();
  /// A launch (or copy) wrote the device's buffer: the host copy is stale.
  void device_written();
  /// Frees the data (host and device copies; outside memory is kept): the engine's intermediates
  /// after their last reader, while the launch list that made them still names the storage. A
  /// later use allocates again, uninitialised.
  void release_data();
  /// The id the next Storage will get (storages created after this point have ids >= it).
  static uint64_t next_id();

  /// Counts the in-place overwrites of the data (realized assignments, checkpoint loads). A
  /// BUFFER node records the version it reads; a node whose version is behind reads a copy that
  /// the engine kept for it (engine/overwrite.h), or has lost its data (an error).
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }
  void set_version(uint64_t v) { version_ = v; }
  /// The live BUFFER nodes that read this storage (the engine's buffer table registers and
  /// removes them; a node whose last reference is gone is not returned).
  void add_node(const ir::Node* n);
  void remove_node(const ir::Node* n);
  std::vector<ir::NodeRef> live_nodes();

 private:
  uint64_t id_;
  uint64_t version_ = 0;
  // The readers, as plain pointers (see live_nodes): the first in its own slot, the rest after it
  // in order. Almost every storage has one reader (an eager call's output buffer): its node is
  // registered and removed without allocating, under a spin lock (not a std::mutex's calls).
  support::SpinLock nodes_mu_;
  const ir::Node* first_node_ = nullptr;
  std::vector<const ir::Node*> more_nodes_;
  ScalarType dtype_;
  int64_t numel_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;  // set for outside memory (then data_ is not host_alloc's)
  // A device storage's buffer, and which copies hold the current data.
  Device* device_ = nullptr;
  DeviceBuffer buf_;
  enum class Current : uint8_t { None, Host, Device, Both } current_ = Current::None;
  // Copies the data to `side` (Host or Device, both allocated) where only the other side holds
  // it (counted as a transfer); both hold it then.
  void copy_across_to(Current side);
};

/// Copies src's data into dst (the same dtype and numel), wherever each lives: host to host, in,
/// out, on one device, or through the host between two devices.
void copy_data(Storage& dst, Storage& src);

/// Copies between host and device memory since process start (copy_data, device_buffer, data;
/// the engine's launches of host buffers on a device: count_transfer), for
/// RuntimeStats::copies_to_device / copies_to_host: the engine points them at its counters.
void count_transfers_into(int64_t* to_device, int64_t* to_host);
void count_transfer(bool to_device);

}  // namespace ember::runtime
