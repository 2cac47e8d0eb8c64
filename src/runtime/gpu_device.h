// What the devices with work-items (opencl, cuda: codegen/dialect.h) share: their programs' plans
// and the rendering of a build batch, a cache of freed buffers, and a table of built programs by
// source. Internal to runtime.
#pragma once
#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/dialect.h"
#include "codegen/kernel_plan.h"
#include "codegen/render_gpu.h"
#include "runtime/device.h"

namespace ember::runtime {

/// A kernel on a device with work-items: its launch (work-groups and their size) and rendering.
struct GpuProgram : Program {
  codegen::GpuPlan plan;
};

/// A program of device D whose functions are of type Fn (a cl_kernel, a CUfunction): launched
/// by D::launch(program, bufs).
template <class D, class Fn>
struct GpuProgramOn : GpuProgram {
  D* device = nullptr;
  Fn fn = nullptr;  // null until built; kept for the process, as the cpu's objects are
  void launch(void* const* bufs) const override { device->launch(*this, bufs); }
};

/// The device D, created on first use (a failure is retried by the next use) and never
/// destroyed: driver objects released after the driver's own teardown at exit may crash.
template <class D>
D& lasting_device() {
  static D* d = new D();
  return *d;
}

/// A program of type P (a GpuProgram) for `k`, its kernel, name and plan (and DEBUG=3's words for
/// it) set; the plan's work-groups take at most `local_bytes` of local memory.
template <class P>
std::shared_ptr<P> new_gpu_program(const schedule::Kernel& k, int64_t local_bytes) {
  auto p = new_program<P>(k);
  p->plan = codegen::gpu_plan(k, local_bytes);
  p->opts = p->plan.str();  // DEBUG=3
  return p;
}

/// The translation unit of a build batch: the dialect's prelude, then each program's kernel as
/// its plan lays it out (codegen/render_gpu.h), named batch_symbol(i, name); each program's
/// `source` set. `symbols` receives the names.
template <class P>
std::string gpu_batch_source(const std::vector<P*>& todo, const codegen::Dialect& d,
                             std::vector<std::string>& symbols) {
  std::string source = d.prelude(codegen::Target{});
  for (size_t i = 0; i < todo.size(); i++) {
    symbols.push_back(batch_symbol(i, todo[i]->name));
    todo[i]->source = codegen::render_gpu(todo[i]->kernel, todo[i]->plan, symbols[i], d);
    source += "\n" + todo[i]->source;
  }
  return source;
}

/// The compile steps of a device with work-items (D, through CRTP): prepare() makes a P (a
/// GpuProgram with `device` and `fn`) per kernel, planned within D::local_bytes() of local
/// memory per work-group, build() renders the unbuilt ones as one batch in
/// D::dialect() and hands it to D::load(source, programs, symbols), which builds it (or takes it
/// from its ProgramTable) and sets each program's `fn`.
template <class D, class P>
class GpuCompiler : public Device {
 public:
  std::vector<std::shared_ptr<Program>> prepare(
      const std::vector<const schedule::Kernel*>& kernels) override {
    return make_programs(kernels, [this](const schedule::Kernel& k) {
      auto p = new_gpu_program<P>(k, static_cast<D*>(this)->local_bytes());
      p->device = static_cast<D*>(this);
      if (own_memory()) p->memory = this;
      return p;
    });
  }
  // One program for the batch's unbuilt kernels; their functions are numbered within the batch,
  // so its text, and its cache entry, depend only on its kernels.
  void build(const std::vector<std::shared_ptr<Program>>& programs) override {
    const std::vector<P*> todo = unbuilt<P>(programs);
    if (todo.empty()) return;
    std::vector<std::string> symbols;
    const std::string source = gpu_batch_source(todo, D::dialect(), symbols);
    static_cast<D*>(this)->load(source, todo, symbols);
  }
};

/// Freed device buffers kept for reuse, by size rounded up to 256 bytes, up to 512 MiB in all.
/// Thread-safe. Handles are the device's (a cl_mem, a CUdeviceptr).
class BufferCache {
 public:
  static size_t rounded(size_t bytes) { return (std::max<size_t>(bytes, 1) + 255) / 256 * 256; }
  /// A kept buffer of rounded(bytes), taken out of the cache, or null.
  void* take(size_t bytes);
  /// Keeps a freed buffer of `bytes`; false where that would pass the cap (the caller releases
  /// it).
  bool keep(void* handle, size_t bytes);
  /// Every kept buffer, the cache emptied: for an allocation that failed to retry after the
  /// caller has released them.
  std::vector<void*> drain();
  size_t bytes();

 private:
  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t bytes_ = 0;
};

/// Built programs (a cl_program, a CUmodule) by their source: each source is built once per
/// process. Thread-safe: one build at a time.
template <class T>
class ProgramTable {
 public:
  /// The program of `source`, built by `build(source)` where it is not in the table.
  template <class Build>
  T get(const std::string& source, Build build) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = table_.find(source); it != table_.end()) return it->second;
    T t = build(source);
    table_.emplace(source, t);
    return t;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, T> table_;
};

}  // namespace ember::runtime
