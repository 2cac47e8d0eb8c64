#include "runtime/storage.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "ember/error.h"
#include "ir/node.h"
#include "runtime/host_blocks.h"

namespace ember::runtime {

namespace {
std::atomic<uint64_t> g_next_id{1};
int64_t g_no_counter[2] = {0, 0};
std::atomic<int64_t*> g_to_device{&g_no_counter[0]}, g_to_host{&g_no_counter[1]};
}  // namespace

void count_transfers_into(int64_t* to_device, int64_t* to_host) {
  g_to_device = to_device;
  g_to_host = to_host;
}

void count_transfer(bool to_device) {
  std::atomic_ref<int64_t>(*(to_device ? g_to_device : g_to_host).load())
      .fetch_add(1, std::memory_order_relaxed);
}

Storage::Storage(ScalarType dtype, int64_t numel, Device* device)
    : id_(g_next_id++), dtype_(dtype), numel_(numel), device_(device) {}

Storage::Storage(ScalarType dtype, int64_t numel, void* data, std::shared_ptr<void> owner)
    : id_(g_next_id++), dtype_(dtype), numel_(numel), data_(data), owner_(std::move(owner)) {}

Storage::~Storage() {
  if (!owner_) host_free(data_, nbytes());
  if (buf_.handle) device_->free(buf_);
}

uint64_t Storage::next_id() { return g_next_id.load(); }

void Storage::add_node(const ir::Node* n) {
  std::lock_guard<support::SpinLock> l(nodes_mu_);
  if (!first_node_)
    first_node_ = n;
  else
    more_nodes_.push_back(n);
}

void Storage::remove_node(const ir::Node* n) {
  std::lock_guard<support::SpinLock> l(nodes_mu_);
  if (first_node_ != n) {
    std::erase(more_nodes_, n);
  } else if (more_nodes_.empty()) {
    first_node_ = nullptr;
  } else {  // the next reader moves up: the order of registration is kept
    first_node_ = more_nodes_.front();
    more_nodes_.erase(more_nodes_.begin());
  }
}

std::vector<ir::NodeRef> Storage::live_nodes() {
  std::vector<ir::NodeRef> out;
  std::lock_guard<support::SpinLock> l(nodes_mu_);
  if (!first_node_) return out;
  out.reserve(1 + more_nodes_.size());
  // A node in the list is whole (it leaves under this lock before being torn down), but may be
  // dying: try_acquire skips it.
  if (ir::NodeRef r = ir::NodeRef::try_acquire(first_node_)) out.push_back(std::move(r));
  for (const ir::Node* n : more_nodes_)
    if (ir::NodeRef r = ir::NodeRef::try_acquire(n)) out.push_back(std::move(r));
  return out;
}

void* Storage::data() {
  host_read();
  if (device_) current_ = Current::Host;  // the caller may write
  return data_;
}

const void* Storage::host_read() {
  if (!data_) {
    // Whole cache lines (vector loads past a short tail stay inside the block); a freed block of
    // the same size is reused (host_blocks.h).
    data_ = host_alloc(nbytes());
    if (!data_)
      throw Error("out of memory: cannot allocate a tensor buffer of " + std::to_string(nbytes()) +
                  " bytes (" + std::to_string(static_cast<double>(nbytes()) / (1 << 30)) + " GiB)");
  }
  copy_across_to(Current::Host);
  return data_;
}

DeviceBuffer Storage::device_buffer() {
  if (!device_) throw Error("internal error: device_buffer() of a host storage");
  if (!buf_.handle) buf_ = device_->allocate(nbytes());
  copy_across_to(Current::Device);
  return buf_;
}

void Storage::copy_across_to(Current side) {
  const bool to_device = side == Current::Device;
  if (current_ != (to_device ? Current::Host : Current::Device)) return;
  if (to_device)
    device_->copy_in(buf_, data_, nbytes());
  else
    device_->copy_out(data_, buf_, nbytes());
  count_transfer(to_device);
  current_ = Current::Both;
}

void Storage::device_written() {
  if (device_) current_ = Current::Device;
}

void Storage::release_data() {
  if (owner_) return;
  host_free(data_, nbytes());
  data_ = nullptr;
  if (buf_.handle) device_->free(buf_);
  buf_ = {};
  current_ = Current::None;
}

void copy_data(Storage& dst, Storage& src) {
  const size_t n = dst.nbytes();
  if (src.nbytes() != n)
    throw Error("internal error: a copy of " + std::to_string(src.nbytes()) + " bytes into " +
                std::to_string(n));
  Device* to = dst.device();
  Device* from = src.device();
  if (!to && !from) {
    if (n) std::memcpy(dst.data(), src.data(), n);
  } else if (to && to == from) {
    to->copy(dst.device_buffer(), src.device_buffer(), n);
    dst.device_written();
  } else if (to) {  // in, from the host or (through it) from another device
    to->copy_in(dst.device_buffer(), src.host_read(), n);
    count_transfer(true);
    dst.device_written();
  } else {
    from->copy_out(dst.data(), src.device_buffer(), n);
    count_transfer(false);
  }
}

}  // namespace ember::runtime
