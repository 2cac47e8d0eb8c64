#include "runtime/device.h"

#include <cstring>

#include "ember/error.h"
#include "runtime/host_blocks.h"

namespace ember::runtime {

Device& cpu_device();
Device& interp_device();
Device& opencl_device();  // runtime/opencl/ (opencl_absent.cpp where ember is built without it)

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

Device& get_device(const std::string& name) {
  if (name == "cpu") return cpu_device();
  if (name == "interp") return interp_device();
  if (name == "opencl") return opencl_device();
  throw ValueError("unknown device '" + name + "' (known: cpu, interp, opencl)");
}

}  // namespace ember::runtime
