// The cuda device: renders a batch of kernels into one CUDA C++ translation unit (the CUDA
// dialect's prelude, then each kernel as codegen::render_gpu writes it for its GpuPlan), compiles
// it once with NVRTC for the GPU's architecture (modules are cached by their source: the same
// batch is never compiled twice in a process), and launches each kernel as its plan's blocks on
// the primary context's default stream.
//
// Memory: cuMemAlloc buffers through a cache of freed buffers (gpu_device.h, BufferCache), as the
// opencl device's. A launch takes CUdeviceptr buffers (Program::memory): tensors that live here
// (Tensor::to("cuda"), nn::Module::to) stay resident between launches; host storages (a realize
// of host tensors on this device: EMBER_DEVICE=cuda) are copied in and out around each launch by
// the engine (engine/run.cpp, DeviceArgs). A jit replay whose buffers all live here runs as one
// CUDA graph (cuda_graph.h).
#include "runtime/cuda/cuda_device.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "codegen/dialect.h"
#include "ember/error.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/cuda_graph.h"
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
  bool own_memory() const override { return true; }
  bool launch_graph(uint64_t key, const std::vector<SequenceStep>& steps) override;

  static const codegen::Dialect& dialect() { return codegen::cuda_dialect(); }
  // The kernels' static __shared__ arrays: 48 KiB a block on every GPU (kernel_plan.h).
  static int64_t local_bytes() { return codegen::kGpuLocalBytes; }
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
  static unsigned grid_of(const codegen::GpuPlan& plan) {
    return static_cast<unsigned>(codegen::cuda_dialect().grid(plan.groups, plan.local));
  }

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
  CudaGraphs graphs_{d_};
  std::mutex launch_mu_;  // one launch (or graph launch) at a time
};

// The kernel's arguments are the buffers' CUdeviceptr values, as the handles hold them.
void CUDADevice::launch(const CUDAProgram& p, void* const* bufs) {
  if (!p.fn) throw Error("internal error: kernel " + p.name + " launched before it was built");
  std::vector<void*> args(p.kernel.buffers.size());
  for (size_t i = 0; i < args.size(); i++) args[i] = const_cast<void**>(&bufs[i]);
  std::lock_guard<std::mutex> lock(launch_mu_);
  current();
  if (p.plan.groups > 0)
    cu::check(d_.cuLaunchKernel(p.fn, grid_of(p.plan), 1, 1, static_cast<unsigned>(p.plan.local), 1,
                                1, 0, nullptr, args.data(), nullptr),
              "cuLaunchKernel");
  cu::check(d_.cuCtxSynchronize(), "cuCtxSynchronize");  // a kernel's fault, here
}

bool CUDADevice::launch_graph(uint64_t key, const std::vector<SequenceStep>& steps) {
  std::vector<GraphLaunch> launches;
  for (const SequenceStep& s : steps) {
    if (!s.program) {  // a copy between buffers of this device
      if (s.bytes) launches.push_back({nullptr, 0, 0, s.args, s.bytes});
      continue;
    }
    const auto& p = static_cast<const CUDAProgram&>(*s.program);
    if (!p.fn) throw Error("internal error: kernel " + p.name + " launched before it was built");
    if (p.plan.groups > 0)
      launches.push_back({p.fn, grid_of(p.plan), static_cast<unsigned>(p.plan.local), s.args, 0});
  }
  std::lock_guard<std::mutex> lock(launch_mu_);
  current();
  graphs_.launch(key, launches, ctx_);
  return true;
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

CudaGraphCounts cuda_graph_counts() { return CudaGraphs::counts(); }

}  // namespace ember::runtime
