// The cuda device: renders a batch of kernels into one CUDA C++ translation unit (the CUDA
// dialect's prelude, then each kernel as codegen::render_gpu writes it for its GpuPlan), compiles
// it once with NVRTC for the GPU's architecture (modules are cached by their source: the same
// batch is never compiled twice in a process), and launches each kernel as its plan's blocks on
// the primary context's default stream.
//
// Memory: cuMemAlloc buffers through a cache of freed buffers (gpu_device.h, BufferCache), as the
// opencl device's. The engine's buffers are host memory still
// (runtime/storage.h), so a launch copies every buffer of the kernel in (an output too: a store
// may cover only part of it), runs, and copies the outputs out. Slots bound to one host buffer (an
// in-place update) share one device buffer.
#include "runtime/cuda/cuda_device.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "codegen/dialect.h"
#include "ember/error.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/gpu_device.h"

namespace ember::runtime {

namespace {

std::atomic<int64_t> g_builds{0};

class CUDADevice;

using CUDAProgram = GpuProgramOn<CUDADevice, CUfunction>;

std::string gpu_line(const cu::Driver& d, CUdevice dev) {
  char name[256] = {};
  int major = 0, minor = 0;
  size_t mem = 0;
  cu::check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  cu::check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
            "cuDeviceGetAttribute");
  cu::check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
            "cuDeviceGetAttribute");
  cu::check(d.cuDeviceTotalMem(&mem, dev), "cuDeviceTotalMem");
  return std::string(name) + " (sm_" + std::to_string(major) + std::to_string(minor) + ", " +
         std::to_string(mem >> 20) + " MiB)";
}

class CUDADevice : public GpuCompiler<CUDADevice, CUDAProgram> {
 public:
  CUDADevice() : d_(cu::driver()) {
    int count = 0;
    cu::check(d_.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) throw ValueError("the cuda device is unavailable: the driver finds no GPU");
    cu::check(d_.cuDeviceGet(&dev_, 0), "cuDeviceGet");
    int major = 0, minor = 0;
    cu::check(d_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_),
              "cuDeviceGetAttribute");
    cu::check(d_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_),
              "cuDeviceGetAttribute");
    arch_ = "sm_" + std::to_string(major) + std::to_string(minor);
    gpu_ = gpu_line(d_, dev_);
    cu::check(d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  }

  std::string name() const override { return "cuda"; }

  static const codegen::Dialect& dialect() { return codegen::cuda_dialect(); }
  void load(const std::string& source, const std::vector<CUDAProgram*>& todo,
            const std::vector<std::string>& symbols) {
    CUmodule mod = module(source);
    for (size_t i = 0; i < todo.size(); i++)
      cu::check(d_.cuModuleGetFunction(&todo[i]->fn, mod, symbols[i].c_str()),
                "cuModuleGetFunction");
  }

  DeviceBuffer allocate(size_t bytes) override {
    if (void* h = cache_.take(bytes)) return {h, bytes};
    current();
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, BufferCache::rounded(bytes));
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      // The cache's buffers may be what the allocation lacks.
      for (void* h : cache_.drain()) d_.cuMemFree(reinterpret_cast<CUdeviceptr>(h));
      r = d_.cuMemAlloc(&p, BufferCache::rounded(bytes));
    }
    if (r != CUDA_SUCCESS)
      throw Error("out of memory: the cuda device cannot allocate " + std::to_string(bytes) +
                  " bytes on " + gpu_ + " (" + error_name(r) + ")");
    return {to_handle(p), bytes};
  }

  void free(DeviceBuffer b) override {
    if (!b.handle || cache_.keep(b.handle, b.bytes)) return;
    current();
    d_.cuMemFree(ptr(b));
  }

  void copy_in(DeviceBuffer dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    current();
    cu::check(d_.cuMemcpyHtoD(ptr(dst, bytes), src, bytes), "cuMemcpyHtoD");
  }
  void copy_out(void* dst, DeviceBuffer src, size_t bytes) override {
    if (!bytes) return;
    current();
    cu::check(d_.cuMemcpyDtoH(dst, ptr(src, bytes), bytes), "cuMemcpyDtoH");
  }
  void copy(DeviceBuffer dst, DeviceBuffer src, size_t bytes) override {
    if (!bytes) return;
    current();
    cu::check(d_.cuMemcpyDtoD(ptr(dst, bytes), ptr(src, bytes), bytes), "cuMemcpyDtoD");
  }

  void launch(const CUDAProgram& p, void* const* bufs);
  const std::string& gpu() const { return gpu_; }

  size_t cached_bytes() { return cache_.bytes(); }

 private:
  static void* to_handle(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
  static CUdeviceptr ptr(DeviceBuffer b) { return reinterpret_cast<CUdeviceptr>(b.handle); }
  static CUdeviceptr ptr(DeviceBuffer b, size_t bytes) {
    if (bytes > b.bytes)
      throw Error("internal error: a copy of " + std::to_string(bytes) +
                  " bytes past the end of a device buffer of " + std::to_string(b.bytes));
    return ptr(b);
  }
  std::string error_name(CUresult r) const {
    const char* name = nullptr;
    d_.cuGetErrorName(r, &name);
    return name ? name : std::to_string(r);
  }
  // The primary context, current on the calling thread (the engine calls from any thread).
  void current() const { cu::check(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

  // The loaded module of `source`: from the cache, else compiled by NVRTC now (a failure shows
  // the log and the numbered source).
  CUmodule module(const std::string& source) {
    return modules_.get(source, [&](const std::string&) {
      g_builds++;
      const std::string cubin = cu::compile(source, arch_);
      current();
      CUmodule mod = nullptr;
      cu::check(d_.cuModuleLoadData(&mod, cubin.data()), "cuModuleLoadData");
      return mod;
    });
  }

  const cu::Driver& d_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  std::string arch_, gpu_;
  ProgramTable<CUmodule> modules_;
  BufferCache cache_;
  std::mutex launch_mu_;  // one launch at a time: its buffers, copies and kernel in order
};

// The device buffers of one launch, freed however the launch ends.
struct LaunchBuffers {
  Device& dev;
  std::vector<DeviceBuffer> owned;
  ~LaunchBuffers() {
    for (const DeviceBuffer& b : owned) dev.free(b);
  }
};

void CUDADevice::launch(const CUDAProgram& p, void* const* bufs) {
  if (!p.fn) throw Error("internal error: kernel " + p.name + " launched before it was built");
  const schedule::Kernel& k = p.kernel;
  const size_t n = k.buffers.size();
  // Slot i's device buffer is that of the first slot bound to the same host buffer.
  std::vector<size_t> first(n), bytes(n, 0);
  for (size_t i = 0; i < n; i++) {
    first[i] = static_cast<size_t>(std::find(bufs, bufs + i, bufs[i]) - bufs);
    const size_t b = static_cast<size_t>(k.buffers[i].numel) * element_size(k.buffers[i].dtype);
    bytes[first[i]] = std::max(bytes[first[i]], b);
  }
  std::lock_guard<std::mutex> lock(launch_mu_);
  current();
  LaunchBuffers held{*this, {}};
  std::vector<DeviceBuffer> slot(n);
  std::vector<CUdeviceptr> ptrs(n);
  std::vector<void*> args(n);
  for (size_t i = 0; i < n; i++) {
    if (first[i] == i) {
      held.owned.push_back(slot[i] = allocate(bytes[i]));
      ptrs[i] = ptr(slot[i]);
      copy_in(slot[i], bufs[i], bytes[i]);
    } else {
      ptrs[i] = ptrs[first[i]];
    }
    args[i] = &ptrs[i];
  }
  if (p.plan.groups > 0)
    cu::check(
        d_.cuLaunchKernel(
            p.fn, static_cast<unsigned>(codegen::cuda_dialect().grid(p.plan.groups, p.plan.local)),
            1, 1, static_cast<unsigned>(p.plan.local), 1, 1, 0, nullptr, args.data(), nullptr),
        "cuLaunchKernel");
  for (size_t i = 0; i < k.num_outputs(); i++)
    if (first[i] == i) copy_out(bufs[i], slot[i], bytes[i]);  // waits for the kernel
  cu::check(d_.cuCtxSynchronize(), "cuCtxSynchronize");       // a kernel's fault, here
}

CUDADevice& the_device() { return lasting_device<CUDADevice>(); }

}  // namespace

Device& cuda_device() { return the_device(); }

std::vector<std::string> cuda_devices() {
  const cu::Driver& d = cu::driver();
  int count = 0;
  cu::check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<std::string> out;
  for (int i = 0; i < count; i++) {
    CUdevice dev = 0;
    cu::check(d.cuDeviceGet(&dev, i), "cuDeviceGet");
    out.push_back(gpu_line(d, dev));
  }
  return out;
}

std::string cuda_compile(const std::string& source, const std::string& arch) {
  return cu::compile(source, arch);
}

int64_t cuda_program_builds() { return g_builds.load(); }

size_t cuda_cached_bytes() { return the_device().cached_bytes(); }

}  // namespace ember::runtime
