// The opencl device: renders a batch of kernels into one OpenCL C program (the OpenCL dialect's
// prelude, then each kernel as codegen::render_gpu writes it for its GpuPlan), builds it once
// (programs are cached by their source on this device: the same batch is never built twice in a
// process), and launches each kernel as its plan's work-groups on an in-order queue.
//
// Memory: the device allocates cl_mem buffers through a cache of freed buffers (gpu_device.h,
// BufferCache), and copies between them and host memory. A launch takes
// cl_mem buffers (Program::memory): the engine's run loop gives it the buffers of storages that
// live here and copies host storages in and out around it (engine/run.cpp, DeviceArgs).
#include "runtime/opencl/opencl_device.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "codegen/dialect.h"
#include "ember/error.h"
#include "runtime/gpu_device.h"
#include "runtime/numbered_source.h"
#include "runtime/opencl/cl_api.h"

namespace ember::runtime {

namespace {

std::atomic<int64_t> g_builds{0};

class OpenCLDevice;

using OpenCLProgram = GpuProgramOn<OpenCLDevice, cl_kernel>;

class OpenCLDevice : public GpuCompiler<OpenCLDevice, OpenCLProgram> {
 public:
  OpenCLDevice() : dev_(cl::pick_device()) {
    cl_int err = CL_SUCCESS;
    ctx_ = clCreateContext(nullptr, 1, &dev_, nullptr, nullptr, &err);
    cl::check(err, "clCreateContext");
    queue_ = clCreateCommandQueue(ctx_, dev_, 0, &err);
    cl::check(err, "clCreateCommandQueue");
    dev_name_ = cl::device_info(dev_, CL_DEVICE_NAME);
    // Division and sqrt correctly rounded, as in C, where the device can (OpenCL allows 2.5 ulp).
    cl_device_fp_config fp = 0;
    cl::check(clGetDeviceInfo(dev_, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, nullptr),
              "clGetDeviceInfo");
    cl_ulong local = 0;
    cl::check(clGetDeviceInfo(dev_, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, nullptr),
              "clGetDeviceInfo");
    local_bytes_ = std::min(static_cast<int64_t>(local), codegen::kGpuLocalBytes);
    options_ = "-cl-std=CL1.2";
    if (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
      options_ += " -cl-fp32-correctly-rounded-divide-sqrt";
  }

  std::string name() const override { return "opencl"; }
  bool own_memory() const override { return true; }

  static const codegen::Dialect& dialect() { return codegen::opencl_dialect(); }
  // The device's local memory per work-group, at most the plans' default (kernel_plan.h).
  int64_t local_bytes() const { return local_bytes_; }
  void load(const std::string& source, const std::vector<OpenCLProgram*>& todo,
            const std::vector<std::string>& symbols) {
    cl_program prog = program(source, todo.size());
    for (size_t i = 0; i < todo.size(); i++) {
      cl_int err = CL_SUCCESS;
      todo[i]->fn = clCreateKernel(prog, symbols[i].c_str(), &err);
      cl::check(err, "clCreateKernel");
    }
  }

  DeviceBuffer allocate(size_t bytes) override {
    if (void* h = cache_.take(bytes)) return {h, bytes};
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, BufferCache::rounded(bytes), nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_OUT_OF_HOST_MEMORY) {
      // The cache's buffers may be what the allocation lacks.
      for (void* h : cache_.drain()) clReleaseMemObject(static_cast<cl_mem>(h));
      m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, BufferCache::rounded(bytes), nullptr, &err);
    }
    if (err != CL_SUCCESS)
      throw Error("out of memory: the opencl device cannot allocate " + std::to_string(bytes) +
                  " bytes on " + dev_name_ + " (" + cl::error_name(err) + ")");
    return {m, bytes};
  }

  void free(DeviceBuffer b) override {
    if (b.handle && !cache_.keep(b.handle, b.bytes))
      clReleaseMemObject(static_cast<cl_mem>(b.handle));
  }

  void copy_in(DeviceBuffer dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    cl::check(
        clEnqueueWriteBuffer(queue_, mem(dst, bytes), CL_TRUE, 0, bytes, src, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
  }
  void copy_out(void* dst, DeviceBuffer src, size_t bytes) override {
    if (!bytes) return;
    cl::check(
        clEnqueueReadBuffer(queue_, mem(src, bytes), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  }
  // Ordered before every later command of the in-order queue (reads included).
  void copy(DeviceBuffer dst, DeviceBuffer src, size_t bytes) override {
    if (!bytes) return;
    cl::check(clEnqueueCopyBuffer(queue_, mem(src, bytes), mem(dst, bytes), 0, 0, bytes, 0, nullptr,
                                  nullptr),
              "clEnqueueCopyBuffer");
  }

  void launch(const OpenCLProgram& p, void* const* bufs);
  void build_source(const std::string& source) { program(source, 0); }

  size_t cached_bytes() { return cache_.bytes(); }

 private:
  cl_mem mem(DeviceBuffer b, size_t bytes) const {
    if (bytes > b.bytes)
      throw Error("internal error: a copy of " + std::to_string(bytes) +
                  " bytes past the end of a device buffer of " + std::to_string(b.bytes));
    return static_cast<cl_mem>(b.handle);
  }

  // The built program of `source`: from the cache, else built now (a failure shows the log and
  // the numbered source).
  cl_program program(const std::string& source, size_t kernels) {
    return programs_.get(source, [&](const std::string&) {
      const char* text = source.c_str();
      cl_int err = CL_SUCCESS;
      cl_program prog = clCreateProgramWithSource(ctx_, 1, &text, nullptr, &err);
      cl::check(err, "clCreateProgramWithSource");
      g_builds++;
      err = clBuildProgram(prog, 1, &dev_, options_.c_str(), nullptr, nullptr);
      if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(prog, dev_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
        std::string log(n, '\0');
        clGetProgramBuildInfo(prog, dev_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
        clReleaseProgram(prog);
        throw CompileError("opencl: building a program of " + std::to_string(kernels) +
                           " kernel(s) on " + dev_name_ + " failed (" + cl::error_name(err) +
                           "):\n" + log.c_str() + "\nsource (" + options_ + "):\n" +
                           numbered_source(source));
      }
      return prog;
    });
  }

  cl_device_id dev_;
  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::string dev_name_, options_;
  int64_t local_bytes_ = 0;
  ProgramTable<cl_program> programs_;
  BufferCache cache_;
  std::mutex launch_mu_;  // a kernel's arguments are set and enqueued by one thread at a time
};

void OpenCLDevice::launch(const OpenCLProgram& p, void* const* bufs) {
  if (!p.fn) throw Error("internal error: kernel " + p.name + " launched before it was built");
  std::lock_guard<std::mutex> lock(launch_mu_);
  for (size_t i = 0; i < p.kernel.buffers.size(); i++)
    cl::check(clSetKernelArg(p.fn, static_cast<cl_uint>(i), sizeof(cl_mem), &bufs[i]),
              "clSetKernelArg");
  if (p.plan.groups > 0) {
    const size_t global = static_cast<size_t>(
                     codegen::opencl_dialect().grid(p.plan.groups, p.plan.local)),
                 local = static_cast<size_t>(p.plan.local);
    cl::check(
        clEnqueueNDRangeKernel(queue_, p.fn, 1, nullptr, &global, &local, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
  }
  cl::check(clFinish(queue_), "clFinish");
}

OpenCLDevice& the_device() { return lasting_device<OpenCLDevice>(); }

}  // namespace

Device& opencl_device() { return the_device(); }

void opencl_build(const std::string& source) { the_device().build_source(source); }

int64_t opencl_program_builds() { return g_builds.load(); }

size_t opencl_cached_bytes() { return the_device().cached_bytes(); }

}  // namespace ember::runtime
