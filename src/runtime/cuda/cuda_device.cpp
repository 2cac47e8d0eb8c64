// The cuda device: renders a batch of kernels into one CUDA C++ translation unit (the CUDA
// dialect's prelude, then each kernel as codegen::render_work_item writes it), compiles it once
// with NVRTC for the GPU's architecture (modules are cached by their source: the same batch is
// never compiled twice in a process), and launches each kernel as one thread per output element,
// in blocks of kBlock threads, on the primary context's default stream.
//
// Memory: cuMemAlloc buffers through a cache of freed buffers (by size rounded to 256 bytes, up to
// kCacheCapBytes), as the opencl device's. The engine's buffers are host memory still
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
#include "codegen/render_c.h"
#include "ember/error.h"
#include "runtime/cuda/cuda_api.h"

namespace ember::runtime {

namespace {

constexpr size_t kCacheCapBytes = size_t{512} << 20;
constexpr unsigned kBlock = 256;
std::atomic<int64_t> g_builds{0};

size_t rounded(size_t bytes) { return (std::max<size_t>(bytes, 1) + 255) / 256 * 256; }

class CUDADevice;

struct CUDAProgram : Program {
  CUDADevice* device = nullptr;
  CUfunction fn = nullptr;  // null until built; the module is kept for the process
  size_t items = 0;         // threads (codegen::work_items)
  void launch(void* const* bufs) const override;
};

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

class CUDADevice : public Device {
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

  std::vector<std::shared_ptr<Program>> prepare(
      const std::vector<const schedule::Kernel*>& kernels) override {
    return make_programs(kernels, [this](const schedule::Kernel& k) {
      auto p = new_program<CUDAProgram>(k);
      p->device = this;
      p->items = static_cast<size_t>(codegen::work_items(k));
      return p;
    });
  }

  // One module for the batch's unbuilt kernels; their functions are numbered within the batch,
  // so its text, and its cache entry, depend only on its kernels.
  void build(const std::vector<std::shared_ptr<Program>>& programs) override {
    const std::vector<CUDAProgram*> todo = unbuilt<CUDAProgram>(programs);
    if (todo.empty()) return;
    std::vector<std::string> symbols;
    std::string source = codegen::cuda_dialect().prelude(codegen::Target{});
    for (size_t i = 0; i < todo.size(); i++) {
      symbols.push_back(batch_symbol(i, todo[i]->name));
      todo[i]->source =
          codegen::render_work_item(todo[i]->kernel, symbols[i], codegen::cuda_dialect());
      source += "\n" + todo[i]->source;
    }
    CUmodule mod = module(source);
    for (size_t i = 0; i < todo.size(); i++)
      cu::check(d_.cuModuleGetFunction(&todo[i]->fn, mod, symbols[i].c_str()),
                "cuModuleGetFunction");
  }

  DeviceBuffer allocate(size_t bytes) override {
    const size_t size = rounded(bytes);
    {
      std::lock_guard<std::mutex> lock(mem_mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        CUdeviceptr p = it->second.back();
        it->second.pop_back();
        cached_ -= size;
        return {to_handle(p), bytes};
      }
    }
    current();
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      release_cached();  // the cache's buffers may be what the allocation lacks
      r = d_.cuMemAlloc(&p, size);
    }
    if (r != CUDA_SUCCESS)
      throw Error("out of memory: the cuda device cannot allocate " + std::to_string(bytes) +
                  " bytes on " + gpu_ + " (" + error_name(r) + ")");
    return {to_handle(p), bytes};
  }

  void free(DeviceBuffer b) override {
    if (!b.handle) return;
    const size_t size = rounded(b.bytes);
    {
      std::lock_guard<std::mutex> lock(mem_mu_);
      if (cached_ + size <= kCacheCapBytes) {
        free_[size].push_back(ptr(b));
        cached_ += size;
        return;
      }
    }
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

  size_t cached_bytes() {
    std::lock_guard<std::mutex> lock(mem_mu_);
    return cached_;
  }

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

  void release_cached() {
    std::lock_guard<std::mutex> lock(mem_mu_);
    current();
    for (auto& [size, ps] : free_)
      for (CUdeviceptr p : ps) d_.cuMemFree(p);
    free_.clear();
    cached_ = 0;
  }

  // The loaded module of `source`: from the cache, else compiled by NVRTC now (a failure shows
  // the log and the numbered source).
  CUmodule module(const std::string& source) {
    std::lock_guard<std::mutex> lock(build_mu_);
    if (auto it = modules_.find(source); it != modules_.end()) return it->second;
    g_builds++;
    const std::string cubin = cu::compile(source, arch_);
    current();
    CUmodule mod = nullptr;
    cu::check(d_.cuModuleLoadData(&mod, cubin.data()), "cuModuleLoadData");
    modules_.emplace(source, mod);
    return mod;
  }

  const cu::Driver& d_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  std::string arch_, gpu_;
  std::mutex build_mu_;  // modules_
  std::unordered_map<std::string, CUmodule> modules_;
  std::mutex mem_mu_;  // free_, cached_
  std::unordered_map<size_t, std::vector<CUdeviceptr>> free_;
  size_t cached_ = 0;
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
  if (p.items > 0) {
    const size_t blocks = (p.items + kBlock - 1) / kBlock;
    cu::check(d_.cuLaunchKernel(p.fn, static_cast<unsigned>(blocks), 1, 1, kBlock, 1, 1, 0, nullptr,
                                args.data(), nullptr),
              "cuLaunchKernel");
  }
  for (size_t i = 0; i < k.num_outputs(); i++)
    if (first[i] == i) copy_out(bufs[i], slot[i], bytes[i]);  // waits for the kernel
  cu::check(d_.cuCtxSynchronize(), "cuCtxSynchronize");       // a kernel's fault, here
}

void CUDAProgram::launch(void* const* bufs) const { device->launch(*this, bufs); }

CUDADevice& the_device() {
  // Created on first use (a failure is retried by the next use) and never destroyed: driver
  // objects released after the driver's own teardown at exit may crash.
  static CUDADevice* d = new CUDADevice();
  return *d;
}

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
