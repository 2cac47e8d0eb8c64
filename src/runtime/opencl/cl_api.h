// The OpenCL API as the opencl device uses it (through the ICD loader, Debian
// ocl-icd-opencl-dev): OpenCL 1.2 calls, errors as ember errors with the code's name, the
// platforms and the device the opencl device picks.
#pragma once
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>
#include <vector>

namespace ember::runtime::cl {

/// "CL_OUT_OF_RESOURCES", ..., or the number for a code without a name here.
std::string error_name(cl_int err);
/// Throws ember::Error "OpenCL: <call> failed: <name>" unless err is CL_SUCCESS.
void check(cl_int err, const char* call);

/// One string property of a platform or a device.
std::string platform_info(cl_platform_id p, cl_platform_info what);
std::string device_info(cl_device_id d, cl_device_info what);

/// The platforms the ICD loader finds (none: empty, not an error).
std::vector<cl_platform_id> platforms();
/// A platform's devices of `type` (none: empty).
std::vector<cl_device_id> devices(cl_platform_id p, cl_device_type type);

/// The device the opencl device runs on: the first GPU of the first platform that has one, else
/// the first device of any type. Throws ValueError when there is none (no driver installed).
cl_device_id pick_device();

}  // namespace ember::runtime::cl
