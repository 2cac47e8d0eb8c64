#include "runtime/opencl/cl_api.h"

#include "ember/error.h"
#include "runtime/device.h"

namespace ember::runtime {

namespace cl {

std::string error_name(cl_int err) {
  switch (err) {
#define EMBER_CL_ERROR(name) \
  case name:                 \
    return #name;
    EMBER_CL_ERROR(CL_DEVICE_NOT_FOUND)
    EMBER_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    EMBER_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    EMBER_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    EMBER_CL_ERROR(CL_OUT_OF_RESOURCES)
    EMBER_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    EMBER_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    EMBER_CL_ERROR(CL_INVALID_VALUE)
    EMBER_CL_ERROR(CL_INVALID_PLATFORM)
    EMBER_CL_ERROR(CL_INVALID_DEVICE)
    EMBER_CL_ERROR(CL_INVALID_CONTEXT)
    EMBER_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    EMBER_CL_ERROR(CL_INVALID_MEM_OBJECT)
    EMBER_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    EMBER_CL_ERROR(CL_INVALID_PROGRAM)
    EMBER_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    EMBER_CL_ERROR(CL_INVALID_KERNEL_NAME)
    EMBER_CL_ERROR(CL_INVALID_KERNEL)
    EMBER_CL_ERROR(CL_INVALID_ARG_INDEX)
    EMBER_CL_ERROR(CL_INVALID_ARG_VALUE)
    EMBER_CL_ERROR(CL_INVALID_ARG_SIZE)
    EMBER_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    EMBER_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    EMBER_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    EMBER_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    EMBER_CL_ERROR(CL_INVALID_BUFFER_SIZE)
#undef EMBER_CL_ERROR
    case -1001:  // cl_khr_icd's CL_PLATFORM_NOT_FOUND_KHR: the loader found no driver
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "OpenCL error " + std::to_string(err);
  }
}

void check(cl_int err, const char* call) {
  if (err != CL_SUCCESS)
    throw Error(std::string("OpenCL: ") + call + " failed: " + error_name(err));
}

namespace {
// A string property read with `get` (clGetPlatformInfo or clGetDeviceInfo, named `call`), less
// its terminating NULs.
template <class Get, class Object, class Info>
std::string info_string(Get get, Object o, Info what, const char* call) {
  size_t n = 0;
  check(get(o, what, 0, nullptr, &n), call);
  std::string s(n, '\0');
  check(get(o, what, n, s.data(), nullptr), call);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
}  // namespace

std::string platform_info(cl_platform_id p, cl_platform_info what) {
  return info_string(clGetPlatformInfo, p, what, "clGetPlatformInfo");
}

std::string device_info(cl_device_id d, cl_device_info what) {
  return info_string(clGetDeviceInfo, d, what, "clGetDeviceInfo");
}

std::vector<cl_platform_id> platforms() {
  cl_uint n = 0;
  const cl_int err = clGetPlatformIDs(0, nullptr, &n);
  if (err == -1001 || n == 0) return {};  // CL_PLATFORM_NOT_FOUND_KHR: no driver installed
  check(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> out(n);
  check(clGetPlatformIDs(n, out.data(), nullptr), "clGetPlatformIDs");
  return out;
}

std::vector<cl_device_id> devices(cl_platform_id p, cl_device_type type) {
  cl_uint n = 0;
  const cl_int err = clGetDeviceIDs(p, type, 0, nullptr, &n);
  if (err == CL_DEVICE_NOT_FOUND || n == 0) return {};
  check(err, "clGetDeviceIDs");
  std::vector<cl_device_id> out(n);
  check(clGetDeviceIDs(p, type, n, out.data(), nullptr), "clGetDeviceIDs");
  return out;
}

cl_device_id pick_device() {
  const std::vector<cl_platform_id> ps = platforms();
  for (cl_platform_id p : ps)
    if (auto ds = devices(p, CL_DEVICE_TYPE_GPU); !ds.empty()) return ds[0];
  for (cl_platform_id p : ps)
    if (auto ds = devices(p, CL_DEVICE_TYPE_ALL); !ds.empty()) return ds[0];
  throw ValueError(
      "the opencl device found no OpenCL device: install an OpenCL driver (on Debian, "
      "pocl-opencl-icd runs OpenCL on the CPU)");
}

}  // namespace cl

std::vector<std::string> opencl_platforms() {
  std::vector<std::string> out;
  for (cl_platform_id p : cl::platforms()) {
    std::string line = cl::platform_info(p, CL_PLATFORM_NAME) + " (" +
                       cl::platform_info(p, CL_PLATFORM_VERSION) + "):";
    const auto ds = cl::devices(p, CL_DEVICE_TYPE_ALL);
    for (size_t i = 0; i < ds.size(); i++)
      line += (i ? ", " : " ") + cl::device_info(ds[i], CL_DEVICE_NAME);
    if (ds.empty()) line += " no devices";
    out.push_back(line);
  }
  return out;
}

}  // namespace ember::runtime
