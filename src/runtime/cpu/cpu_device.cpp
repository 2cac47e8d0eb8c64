// The cpu device: renders a batch of kernels into one C translation unit (one shared object,
// compiled by a few processes in parallel when the batch is large: compiler.h), and launches the
// functions on the persistent thread pool.
#include <unordered_map>

#include "codegen/opt.h"
#include "codegen/render_c.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"
#include "runtime/device.h"
#include "runtime/thread_pool.h"

namespace ember::runtime {

namespace {

using KernelFn = void (*)(void* const*, int64_t, int64_t);

// Splitting a kernel across threads pays only above this much work (loop-space elements).
constexpr int64_t kMinParallelWork = 1 << 15;

struct CpuProgram : Program {
  KernelFn fn = nullptr;
  int64_t outer = 1;
  int64_t work = 0;
  void launch(void* const* bufs) const override {
    ThreadPool& pool = thread_pool();
    if (pool.threads() > 1 && work >= kMinParallelWork && outer > 1) {
      pool.parallel_for(outer, [&](int64_t b, int64_t e) { fn(bufs, b, e); });
    } else {
      fn(bufs, 0, outer);
    }
  }
};

class CpuDevice : public Device {
 public:
  std::string name() const override { return "cpu"; }

  std::vector<std::shared_ptr<Program>> compile(
      const std::vector<const schedule::Kernel*>& kernels) override {
    std::vector<std::shared_ptr<CpuProgram>> progs;
    std::vector<std::string> sources;
    const codegen::Target& target = host_target();
    for (size_t i = 0; i < kernels.size(); i++) {
      auto p = std::make_shared<CpuProgram>();
      p->kernel = *kernels[i];
      codegen::Opts o = codegen::heuristic(p->kernel, target);
      p->opts = o.str();
      p->name = p->kernel.name();
      p->outer = codegen::outer_extent(p->kernel, o);
      p->work = ir::shape_numel(p->kernel.full_shape);
      std::string fn = "k" + std::to_string(i) + "_" + p->name;
      p->source = codegen::render_c(p->kernel, o, fn);
      sources.push_back(p->source);
      progs.push_back(p);
    }
    bool hit = false;
    // One cache entry per batch, built by up to thread-count compiler processes at once.
    void* handle = compile_and_load(codegen::c_prelude(target), sources, num_threads(), &hit);
    std::vector<std::shared_ptr<Program>> out;
    for (size_t i = 0; i < progs.size(); i++) {
      progs[i]->fn = reinterpret_cast<KernelFn>(
          load_symbol(handle, "k" + std::to_string(i) + "_" + progs[i]->name));
      out.push_back(progs[i]);
    }
    return out;
  }
};

}  // namespace

Device& cpu_device() {
  static CpuDevice d;
  return d;
}

}  // namespace ember::runtime
