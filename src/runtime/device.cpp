#include "runtime/device.h"

#include <cstring>
#include <map>
#include <mutex>

#include "ember/error.h"
#include "runtime/host_blocks.h"

namespace ember::runtime {

Device& cpu_device();
Device& interp_device();
Device& opencl_device();  // runtime/opencl/ (opencl_absent.cpp where ember is built without it)
Device& cuda_device();    // runtime/cuda/ (cuda_absent.cpp where ember is built without it)

DeviceBuffer Device::allocate(size_t bytes) {
  void* p = host_alloc(bytes);
  if (!p) throw Error("out of memory: cannot allocate " + std::to_string(bytes) + " bytes");
  return {p, bytes};
}

void Device::free(DeviceBuffer b) { host_free(b.handle, b.bytes); }

void Device::copy_in(DeviceBuffer dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst.handle, src, bytes);
}

void Device::copy_out(void* dst, DeviceBuffer src, size_t bytes) {
  if (bytes) std::memcpy(dst, src.handle, bytes);
}

void Device::copy(DeviceBuffer dst, DeviceBuffer src, size_t bytes) {
  if (bytes) std::memmove(dst.handle, src.handle, bytes);
}

namespace {

std::mutex g_registered_mu;
std::map<std::string, Device*>& registered() {
  static std::map<std::string, Device*> m;
  return m;
}

}  // namespace

void register_device(const std::string& name, Device& device) {
  if (name == "cpu" || name == "interp" || name == "opencl" || name == "cuda")
    throw ValueError("register_device: '" + name + "' is a built-in device");
  std::lock_guard<std::mutex> lock(g_registered_mu);
  registered()[name] = &device;
}

Device& get_device(const std::string& name) {
  if (name == "cpu") return cpu_device();
  if (name == "interp") return interp_device();
  if (name == "opencl") return opencl_device();
  if (name == "cuda") return cuda_device();
  {
    std::lock_guard<std::mutex> lock(g_registered_mu);
    if (auto it = registered().find(name); it != registered().end()) return *it->second;
  }
  throw ValueError("unknown device '" + name + "' (known: cpu, interp, opencl, cuda)");
}

}  // namespace ember::runtime
