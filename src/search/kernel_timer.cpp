// kernel_timer.h: compile a batch of plans, then time each on copies of the kernel's outputs.
#include "search/kernel_timer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include "ember/error.h"
#include "ember/support/clock.h"
#include "runtime/cpu/cpu_device.h"

namespace ember::search {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMinSampleSeconds = 20e-6;  // a sample's length at least (launches repeated)
constexpr int64_t kMaxReps = 1000;

// The programs of `plans`, built as one batch; null where a plan could not be built. A failed
// batch is retried plan by plan, so one bad candidate costs only itself.
std::vector<std::shared_ptr<runtime::Program>> build(
    const schedule::Kernel& k, const std::vector<codegen::KernelPlan>& plans) {
  std::vector<std::shared_ptr<runtime::Program>> ps;
  for (const auto& p : plans) {
    try {
      ps.push_back(runtime::prepare_cpu_program(k, p));
    } catch (const Error&) {
      ps.push_back(nullptr);
    }
  }
  std::vector<std::shared_ptr<runtime::Program>> todo;
  for (auto& p : ps)
    if (p) todo.push_back(p);
  try {
    runtime::cpu_device().build(todo);
  } catch (const Error&) {
    for (auto& p : ps) {
      if (!p) continue;
      try {
        runtime::cpu_device().build({p});
      } catch (const Error&) {
        p = nullptr;
      }
    }
  }
  return ps;
}

// The kernel's buffers as a timed launch sees them: outputs replaced by copies.
class Workspace {
 public:
  Workspace(const schedule::Kernel& k, std::vector<void*> real) : real_(std::move(real)) {
    ptrs_ = real_;
    for (size_t o = 0; o < k.num_outputs(); o++) {
      const size_t bytes =
          static_cast<size_t>(k.buffers[o].numel) * element_size(k.buffers[o].dtype);
      copies_.push_back({real_[o], std::make_unique<uint64_t[]>(bytes / 8 + 1), bytes});
      // Every slot that names this output's buffer (an output read as an input too) reads the copy.
      for (void*& p : ptrs_)
        if (p == real_[o]) p = copies_.back().mem.get();
    }
  }
  // The copies filled with the outputs' current data.
  void refresh() {
    for (auto& c : copies_) std::memcpy(c.mem.get(), c.from, c.bytes);
  }
  void* const* ptrs() const { return ptrs_.data(); }

 private:
  struct Copy {
    const void* from;
    std::unique_ptr<uint64_t[]> mem;
    size_t bytes;
  };
  std::vector<void*> real_, ptrs_;
  std::vector<Copy> copies_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Measure kernel_timer(const schedule::Kernel& k, std::vector<void*> bufs, TimerOptions o) {
  auto ws = std::make_shared<Workspace>(k, std::move(bufs));
  return [k, ws, o](const std::vector<codegen::KernelPlan>& plans, double deadline) {
    std::vector<double> out(plans.size(), kInf);
    if (support::now_seconds() >= deadline) return out;
    const auto programs = build(k, plans);
    double fastest = kInf;
    for (size_t i = 0; i < plans.size(); i++) {
      if (!programs[i]) continue;
      if (support::now_seconds() >= deadline) break;
      const runtime::Program& p = *programs[i];
      ws->refresh();
      for (int w = 0; w < o.warmup; w++) p.launch(ws->ptrs());
      // A sample is `reps` launches, enough for kMinSampleSeconds: the clock's cost and
      // resolution would otherwise decide between kernels of a microsecond.
      double t0 = support::now_seconds();
      p.launch(ws->ptrs());
      const double first = support::now_seconds() - t0;
      const int64_t reps = std::clamp<int64_t>(
          static_cast<int64_t>(kMinSampleSeconds / std::max(first, 1e-9)) + 1, 1, kMaxReps);
      std::vector<double> times;
      if (first > o.give_up_ratio * fastest) {
        times.push_back(first);  // far slower than the best so far: not worth more samples
      } else {
        for (int r = 0; r < std::max(1, o.runs); r++) {
          t0 = support::now_seconds();
          for (int64_t j = 0; j < reps; j++) p.launch(ws->ptrs());
          times.push_back((support::now_seconds() - t0) / static_cast<double>(reps));
          if (support::now_seconds() >= deadline) break;
        }
      }
      out[i] = median(std::move(times));
      fastest = std::min(fastest, out[i]);
    }
    return out;
  };
}

}  // namespace ember::search
