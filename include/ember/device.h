// ember/device.h — where a tensor's data lives, as libtorch's c10::Device: a type and an index.
//
// "cpu" is host memory (the cpu and interp devices compute on it; Context::device picks which).
// "opencl:0" is the memory of the opencl device (one device: index 0), when ember is built with
// OpenCL and a platform is found; "cuda:0" that of the cuda device (the first GPU), when ember is
// built with the CUDA toolkit and the driver finds a GPU. Tensor::to(Device) moves data there; an
// op on tensors in two memories throws ValueError naming both (tensor.h).
#pragma once
#include <cstdint>
#include <string>

namespace ember {

class Device {
 public:
  /// "cpu", "opencl", "opencl:0", "cuda" or "cuda:0" (an absent index is 0). Throws ValueError for
  /// another type or index (naming the known ones), and for "interp": it computes on host memory,
  /// "cpu" (select it with DeviceGuard).
  Device(const std::string& spec);  // NOLINT(google-explicit-constructor): t.to("opencl")
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT(google-explicit-constructor)

  const std::string& type() const { return type_; }
  /// -1 for cpu, else the device's index.
  int64_t index() const { return index_; }
  bool is_cpu() const { return type_ == "cpu"; }
  /// "cpu" or "<type>:<index>".
  std::string str() const;
  bool operator==(const Device& o) const = default;

 private:
  std::string type_;
  int64_t index_ = -1;
};

}  // namespace ember
