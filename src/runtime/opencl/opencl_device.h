// The opencl device (opencl_device.cpp): kernels rendered in OpenCL C (codegen/dialect.h), built
// once per batch and cached by source and device, launched one work-item per output element, on
// buffers in the device's memory (a caching allocator of cl_mem buffers). Built when CMake finds
// OpenCL; opencl_absent.cpp stands in for it otherwise.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/device.h"

namespace ember::runtime {

/// The device on the first OpenCL GPU, else the first OpenCL device (cl_api.h, pick_device),
/// created on first use. Throws ValueError when ember was built without OpenCL or the ICD loader
/// finds no device.
Device& opencl_device();

/// Builds an OpenCL C program on the device, as it builds each batch's text (taken from the cache
/// where that text was built before): for tests and tools. Throws CompileError with the build log
/// and the numbered source.
void opencl_build(const std::string& source);

/// Program builds (clBuildProgram calls) since process start: a batch whose source was built
/// before is taken from the device's cache and not counted.
int64_t opencl_program_builds();

/// The device's buffer cache: bytes of freed buffers kept for reuse.
size_t opencl_cached_bytes();

}  // namespace ember::runtime
