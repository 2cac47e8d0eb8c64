// The cpu device: renders a batch of kernels into one C translation unit (one shared object,
// compiled by a few processes in parallel when the batch is large: compiler.h), and launches the
// functions on the persistent thread pool.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/cpu/cpu_device.h"

#include "codegen/render_c.h"
#include "ember/error.h"
#include "ember/support/thread_pool.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"

namespace ember::runtime {

namespace {

using KernelFn = void (*)(void* const*, int64_t, int64_t);

struct CpuProgram : Program {
  KernelFn fn = nullptr;  // null until built
  codegen::KernelPlan plan;
  int64_t outer = 1;  // units of work (KernelPlan::units)
  // A split across threads cuts the outer range only at multiples of this (KernelPlan::grain).
  int64_t grain = 1;
  bool splits = false;  // KernelPlan::splits
  codegen::Scratch scratch;
  int64_t rows = -1;  // passed after the buffers when the kernel reads it (runtime_rows)
  void launch(void* const* bufs) const override {
    if (!fn) throw Error("internal error: kernel " + name + " launched before it was built");
    if (scratch.bytes > 0 || rows >= 0) return launch_with_extras(bufs);
    run(bufs);
  }
  void run(void* const* bufs) const {
    support::ThreadPool& pool = support::thread_pool();
    const int64_t pieces = (outer + grain - 1) / grain;
    if (splits && pieces > 1 && pool.threads() > 1) {
      pool.parallel_for(
          pieces, [&](int64_t b, int64_t e) { fn(bufs, b * grain, std::min(e * grain, outer)); });
    } else {
      fn(bufs, 0, outer);
    }
  }
  // The slots after the buffers: a pointer to the row count (runtime_rows), then the scratch.
  void launch_with_extras(void* const* bufs) const {
    const size_t n = kernel.buffers.size();
    void* inline_ptrs[16];  // no allocation for the usual few buffers
    std::vector<void*> heap_ptrs(n + 2 > 16 ? n + 2 : 0);
    void** ptrs = heap_ptrs.empty() ? inline_ptrs : heap_ptrs.data();
    std::copy(bufs, bufs + n, ptrs);
    size_t at = n;
    if (rows >= 0) ptrs[at++] = const_cast<int64_t*>(&rows);
    if (scratch.bytes > 0) ptrs[at++] = scratch_memory();
    run(ptrs);
  }
  // The kernel's scratch (split-K partials, a shared column panel) is the calling thread's, reused
  // between launches: a launch runs to completion on the threads of one caller.
  char* scratch_memory() const {
    thread_local std::vector<uint64_t> mem;
    size_t words = static_cast<size_t>(scratch.bytes + 64) / 8 + 1;
    if (mem.size() < words) mem.resize(words);
    auto addr = reinterpret_cast<uintptr_t>(mem.data());
    char* base = reinterpret_cast<char*>((addr + 63) / 64 * 64);
    std::memset(base, 0, static_cast<size_t>(scratch.zeroed));
    return base;
  }
};

// A program for `k` with `plan`, its launch facts read from the plan.
std::shared_ptr<CpuProgram> make_program(const schedule::Kernel& k, codegen::KernelPlan plan) {
  auto p = new_program<CpuProgram>(k);
  p->plan = std::move(plan);
  p->opts = p->plan.str();
  p->outer = p->plan.units(p->kernel);
  p->grain = p->plan.grain(p->kernel);
  p->splits = p->plan.splits(p->kernel);
  p->scratch = p->plan.scratch(p->kernel);
  p->rows = p->plan.runtime_rows(p->kernel);
  return p;
}

class CpuDevice : public Device {
 public:
  std::string name() const override { return "cpu"; }

  std::vector<std::shared_ptr<Program>> prepare(
      const std::vector<const schedule::Kernel*>& kernels) override {
    return make_programs(kernels, [](const schedule::Kernel& k) {
      return make_program(k, codegen::plan(k, host_target()));
    });
  }

  void build(const std::vector<std::shared_ptr<Program>>& programs) override {
    const std::vector<CpuProgram*> todo = unbuilt<CpuProgram>(programs);
    if (todo.empty()) return;
    // The function names number the kernels within the batch, so a batch's text (and cache key)
    // depends only on its kernels. Kernels whose code is the same apart from the name (the same
    // elementwise update over buffers of different sizes: its size is the launch's range; the
    // same tiled product over different row counts: runtime_rows) are compiled once and share
    // the function, within the batch and with the batches built before in this process.
    std::vector<std::string> sources, symbols(todo.size()), bodies(todo.size());
    std::unordered_map<std::string, size_t> first_with_body;
    for (size_t i = 0; i < todo.size(); i++) {
      const std::string symbol = batch_symbol(i, todo[i]->name);
      todo[i]->source = codegen::render_c(todo[i]->kernel, todo[i]->plan, symbol);
      std::string& body = bodies[i];  // the code with its name blanked out
      body = todo[i]->source;
      for (size_t at = body.find(symbol); at != std::string::npos; at = body.find(symbol, at))
        body.replace(at, symbol.size(), "");
      if (KernelFn f = built_fn(body)) {
        todo[i]->fn = f;
        continue;
      }
      auto [it, fresh] = first_with_body.emplace(body, i);
      symbols[i] = fresh ? symbol : symbols[it->second];
      if (fresh) sources.push_back(todo[i]->source);
    }
    if (sources.empty()) return;
    bool hit = false;
    // One cache entry per batch, built by up to thread-count compiler processes at once.
    void* handle =
        compile_and_load(codegen::c_prelude(host_target()), sources, support::num_threads(), &hit);
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < todo.size(); i++) {
      if (todo[i]->fn) continue;
      todo[i]->fn = reinterpret_cast<KernelFn>(load_symbol(handle, symbols[i]));
      built_.emplace(std::move(bodies[i]), todo[i]->fn);
    }
  }

 private:
  KernelFn built_fn(const std::string& body) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = built_.find(body);
    return it == built_.end() ? nullptr : it->second;
  }

  // Every function loaded in this process, by its code with the name blanked out (objects are
  // never unloaded).
  std::mutex mu_;
  std::unordered_map<std::string, KernelFn> built_;
};

}  // namespace

Device& cpu_device() {
  static CpuDevice d;
  return d;
}

std::shared_ptr<Program> prepare_cpu_program(const schedule::Kernel& k,
                                             const codegen::KernelPlan& plan) {
  if (const std::string why = plan.illegal(k, host_target()); !why.empty())
    throw Error("kernel " + k.name() + " cannot be rendered as '" + plan.str() + "': " + why);
  return make_program(k, plan);
}

bool is_cpu_program(const Program& p) { return dynamic_cast<const CpuProgram*>(&p) != nullptr; }

const codegen::KernelPlan& cpu_program_plan(const Program& p) {
  return dynamic_cast<const CpuProgram&>(p).plan;
}

}  // namespace ember::runtime
