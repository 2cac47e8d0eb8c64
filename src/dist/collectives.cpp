// ember::dist's collectives (include/ember/dist.h): argument checks, tensors to host bytes and
// back, the replica check. The job functions and the transport are the backend's (backend.h).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "backend.h"
#include "ember/dist.h"
#include "ember/error.h"

namespace ember::dist {
namespace {

void check_root(const char* what, int root) {
  if (root < 0 || root >= world_size())
    throw ValueError(std::string("dist::") + what + ": root " + std::to_string(root) +
                     " outside [0, " + std::to_string(world_size()) + ")");
}

// The tensor as a buffer of its own (realized), or ValueError for a view.
void require_buffer(const char* what, const Tensor& t) {
  if (!t.defined()) throw ValueError(std::string("dist::") + what + ": undefined tensor");
  t.realize();
  if (!t.is_realized())
    throw ValueError(std::string("dist::") + what +
                     ": the tensor is a view of another tensor's buffer; pass a clone() and "
                     "use the clone");
}

size_t bytes_of(const Tensor& t) {
  return static_cast<size_t>(t.numel()) * element_size(t.dtype());
}

template <typename T>
void reduce_host(std::span<T> values, ReduceOp op, backend::Element element) {
  const int n = world_size();
  if (n == 1 || values.empty()) return;  // the sum over one rank
  backend::all_reduce_sum(values.data(), values.size(), element);
  if (op == ReduceOp::Mean)
    for (T& v : values) v /= static_cast<T>(n);
}

template <typename T>
std::vector<T> gather_host(std::span<const T> values) {
  std::vector<T> out(values.size() * static_cast<size_t>(world_size()));
  if (world_size() == 1)
    std::copy(values.begin(), values.end(), out.begin());
  else
    backend::all_gather(values.data(), out.data(), values.size_bytes());
  return out;
}

// FNV-1a, 64 bits (Fowler, Noll, Vo).
struct Fnv1a {
  uint64_t h = 14695981039346656037ULL;
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  }
  template <typename T>
  void add_value(T v) {
    add(&v, sizeof v);
  }
};

std::string hex(uint64_t v) {
  char s[19];
  std::snprintf(s, sizeof s, "0x%016llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

void all_reduce(std::span<float> values, ReduceOp op) {
  reduce_host(values, op, backend::Element::Float32);
}
void all_reduce(std::span<double> values, ReduceOp op) {
  reduce_host(values, op, backend::Element::Float64);
}

void all_reduce(const Tensor& t, ReduceOp op) {
  if (!t.defined()) throw ValueError("dist::all_reduce: undefined tensor");
  if (t.dtype() != kFloat32 && t.dtype() != kFloat64)
    throw DTypeError(std::string("dist::all_reduce: expected a float32 or float64 tensor, got ") +
                     dtype_name(t.dtype()));
  require_buffer("all_reduce", t);  // also in a job of one: the same errors on every job
  if (world_size() == 1) return;
  overwrite_in_place({t}, [&] {
    const size_t n = static_cast<size_t>(t.numel());
    if (t.dtype() == kFloat32)
      all_reduce(std::span<float>(static_cast<float*>(t.data_ptr()), n), op);
    else
      all_reduce(std::span<double>(static_cast<double*>(t.data_ptr()), n), op);
  });
}

void broadcast(std::span<std::byte> bytes, int root) {
  check_root("broadcast", root);
  if (world_size() > 1 && !bytes.empty()) backend::broadcast(bytes.data(), bytes.size(), root);
}

void broadcast(const std::vector<Tensor>& tensors, int root) {
  check_root("broadcast", root);
  for (const Tensor& t : tensors) require_buffer("broadcast", t);
  if (world_size() == 1) return;
  size_t total = 0;
  for (const Tensor& t : tensors) total += bytes_of(t);
  std::vector<std::byte> packed(total);
  if (rank() == root) {
    size_t at = 0;
    for (const Tensor& t : tensors) {
      std::memcpy(packed.data() + at, t.data_ptr(), bytes_of(t));
      at += bytes_of(t);
    }
  }
  broadcast(std::span<std::byte>(packed), root);
  if (rank() == root) return;
  overwrite_in_place(tensors, [&] {
    size_t at = 0;
    for (const Tensor& t : tensors) {
      std::memcpy(t.data_ptr(), packed.data() + at, bytes_of(t));
      at += bytes_of(t);
    }
  });
}

std::vector<double> all_gather(std::span<const double> values) { return gather_host(values); }
std::vector<uint64_t> all_gather(std::span<const uint64_t> values) { return gather_host(values); }

uint64_t tensors_hash(const std::vector<Tensor>& tensors) {
  Fnv1a f;
  for (const Tensor& t : tensors) {
    if (!t.defined()) throw ValueError("dist::tensors_hash: undefined tensor");
    f.add_value(static_cast<int>(t.dtype()));
    f.add_value(t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) f.add_value(t.size(d));
    Tensor c = t;
    c.realize();
    if (!c.is_realized()) {  // a view: hash a copy of its elements
      c = t.clone();
      c.realize();
    }
    f.add(c.data_ptr(), bytes_of(c));
  }
  return f.h;
}

std::vector<uint64_t> check_replicas(const std::vector<Tensor>& tensors, const std::string& what) {
  const uint64_t mine = tensors_hash(tensors);
  const std::vector<uint64_t> all = all_gather(std::span<const uint64_t>(&mine, 1));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw DistributedError("dist::check_replicas: " + what + " differ between ranks: rank " +
                             std::to_string(r) + " has hash " + hex(all[r]) + ", rank 0 has " +
                             hex(all[0]) + " (the replicas diverged)");
  return all;
}

}  // namespace ember::dist
