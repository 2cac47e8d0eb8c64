#include "engine/realize.h"
#include "engine/stats.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "ember/context.h"
#include "ember/support/clock.h"
#include "ember/support/shape_str.h"
#include "ember/support/thread_spare.h"
#include "engine/graph_dot.h"
#include "engine/plan_cache.h"
#include "engine/profiler.h"
#include "ir/overwrite.h"
#include "ir/storage.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"

namespace ember::engine {

using ir::Op;

namespace {

LaunchHook g_hook;

struct ProgramCache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<runtime::Program>> programs;
};
ProgramCache& program_cache() {
  static ProgramCache c;
  return c;
}

double now() { return support::now_seconds(); }

// Deferred launches (DeferLaunches): the queue and the programs it waits for, all threads.
struct Deferred {
  std::mutex mu;  // held while the queue is compiled and run
  std::vector<Launch> launches;
  std::vector<std::shared_ptr<runtime::Program>> unbuilt;
  std::vector<std::string> unbuilt_keys;
  runtime::Device* device = nullptr;
};
Deferred& deferred() {
  static Deferred d;
  return d;
}
thread_local int t_defer_depth = 0;
thread_local bool t_running_queue = false;

}  // namespace

// A CompileOnly scope of this thread: the programs its realizes prepared (not in the program
// cache, which holds only programs that are or will be built by their thread's queue).
struct CompileOnlyState {
  std::vector<std::shared_ptr<runtime::Program>> programs;
  std::vector<std::string> keys;
  std::unordered_map<std::string, std::shared_ptr<runtime::Program>> by_key;
  runtime::Device* device = nullptr;
};

namespace {

thread_local CompileOnlyState* t_compile_only = nullptr;
thread_local CompileTally t_tally;

// Adds one device compile (dt seconds, since the thread's compile counters read `before`) to
// runtime_stats() and to this thread's tally; returns its compiler processes.
int64_t add_compile_stats(double dt, const runtime::CompileCounters& before) {
  auto& stats = runtime_stats();
  const runtime::CompileCounters after = runtime::compile_counters_this_thread();
  const int64_t runs = after.compiler_runs - before.compiler_runs;
  const int64_t compiled = after.kernels_compiled - before.kernels_compiled;
  const int64_t from_disk = after.kernels_from_disk - before.kernels_from_disk;
  stat_add(stats.compile_seconds, dt);
  stat_add(stats.compiler_runs, runs);
  stat_add(stats.disk_cache_hits, after.disk_hits - before.disk_hits);
  stat_add(stats.kernels_from_compiler, compiled);
  stat_add(stats.kernels_from_disk_cache, from_disk);
  t_tally.seconds += dt;
  t_tally.compiler_runs += runs;
  t_tally.kernels_from_compiler += compiled;
  t_tally.kernels_from_disk_cache += from_disk;
  return runs;
}
std::atomic<bool> g_queue_nonempty{false};

void flush_deferred_hook() { flush_deferred(); }

std::string shape_text(const std::vector<int64_t>& s) {
  return s.empty() ? "1" : support::dims_str(s);
}

}  // namespace

void flush_deferred() {
  // A compile-only thread reads no value, so another thread's queue can wait for its owner.
  if (t_running_queue || t_compile_only || !g_queue_nonempty.load(std::memory_order_acquire))
    return;
  Deferred& d = deferred();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.launches.empty() && d.unbuilt.empty()) return;
  t_running_queue = true;
  struct Done {
    ~Done() {
      t_running_queue = false;
      g_queue_nonempty.store(false);
      ir::Storage::set_before_data_hook(nullptr);
    }
  } done;
  std::vector<Launch> launches = std::move(d.launches);
  auto unbuilt = std::move(d.unbuilt);
  auto keys = std::move(d.unbuilt_keys);
  d.launches.clear();
  d.unbuilt.clear();
  d.unbuilt_keys.clear();
  if (!unbuilt.empty()) {
    auto& stats = runtime_stats();
    const double c0 = now();
    const runtime::CompileCounters before = runtime::compile_counters_this_thread();
    try {
      d.device->build(unbuilt);
    } catch (...) {  // the programs stay unbuilt: forget them, a later realize prepares them again
      auto& cache = program_cache();
      std::lock_guard<std::mutex> l(cache.mu);
      for (auto& k : keys) cache.programs.erase(k);
      throw;
    }
    const double dt = now() - c0;
    stat_add(stats.compile_batches);
    const int64_t runs = add_compile_stats(dt, before);
    if (Context::get().debug >= 1)
      std::fprintf(stderr,
                   "deferred launches: %zu kernels compiled as one batch in %.1f ms (%lld compiler "
                   "processes), %zu launches\n",
                   unbuilt.size(), dt * 1e3, static_cast<long long>(runs), launches.size());
    if (Context::get().debug >= 4)
      for (auto& p : unbuilt) std::fprintf(stderr, "%s\n", p->source.c_str());
  }
  for (auto& l : launches) run_launch(l);
}

DeferLaunches::DeferLaunches() {
  if (t_compile_only || capturing()) return;
  active_ = true;
  t_defer_depth++;
}

void DeferLaunches::finish() {
  if (!active_) return;
  active_ = false;
  if (--t_defer_depth == 0) flush_deferred();
}

DeferLaunches::~DeferLaunches() {
  try {
    finish();
  } catch (...) {
  }
}

void set_launch_hook(LaunchHook hook) {
  if (hook) flush_deferred();  // a capture records launches that run now
  g_hook = std::move(hook);
}

void copy_storage(const std::shared_ptr<ir::Storage>& dst,
                  const std::shared_ptr<ir::Storage>& src) {
  run_launch(Launch{nullptr, {dst, src}});
}
bool capturing() { return !t_compile_only && static_cast<bool>(g_hook); }

namespace {

// Runs one program now on n buffers (buffer(i) gives the i-th), with DEBUG=2 / PROFILE timing.
template <class BufferAt>
void launch_on(const runtime::Program& p, size_t n, BufferAt buffer) {
  void* small[16];  // no allocation for the usual few buffers
  std::vector<void*> many(n > 16 ? n : 0);
  void** ptrs = many.empty() ? small : many.data();
  for (size_t i = 0; i < n; i++) ptrs[i] = buffer(i)->data();
  const Context& ctx = Context::get();
  auto& stats = runtime_stats();
  stat_add(stats.kernels_launched);
  if (ctx.debug < 2 && !ctx.profile_kernels && !ctx.profile) {
    p.launch(ptrs);
    return;
  }
  const double t0 = profile_now();
  p.launch(ptrs);
  const double t1 = profile_now();
  const double dt = t1 - t0;
  stat_add(stats.kernel_seconds, dt);
  if (ctx.profile) record_kernel(p, t0, t1);
  if (ctx.debug < 2) return;
  const auto& k = p.kernel;
  double fl = k.flops(), by = k.bytes();
  std::fprintf(stderr,
               "  kernel %-28s %-18s %9.1f us %10.3g FLOP %10.3g B %8.2f GFLOPS %8.2f GB/s\n",
               p.name.c_str(), shape_text(k.full_shape).c_str(), dt * 1e6, fl, by, fl / dt * 1e-9,
               by / dt * 1e-9);
  if (ctx.debug >= 3 && !p.opts.empty()) std::fprintf(stderr, "    opts: %s\n", p.opts.c_str());
}

}  // namespace

void run_launch(const Launch& l) {
  if (t_compile_only) return;  // nothing runs in a compile-only scope
  if (t_defer_depth > 0 && !t_running_queue && !g_hook) {
    Deferred& d = deferred();
    std::lock_guard<std::mutex> lock(d.mu);
    d.launches.push_back(l);
    g_queue_nonempty.store(true, std::memory_order_release);
    ir::Storage::set_before_data_hook(flush_deferred_hook);
    return;
  }
  if (!l.program) {  // a copy between buffers (in-place results that went through a temporary)
    if (g_hook) g_hook(l);
    std::memcpy(l.buffers[0]->data(), l.buffers[1]->data(), l.buffers[0]->nbytes());
    return;
  }
  launch_on(*l.program, l.buffers.size(), [&](size_t i) { return l.buffers[i].get(); });
}

namespace {

using StorageRef = std::shared_ptr<ir::Storage>;

// What a realize runs, from a fresh schedule or a cached plan: its kernel launches, then the copies
// into in-place targets, and the buffer holding each root's value afterwards.
struct Work {
  std::vector<Launch> launches;
  std::vector<std::pair<StorageRef, StorageRef>> copies;  // (from, to)
  std::vector<StorageRef> results;
  std::vector<StorageRef> fresh;  // plan_work's new buffers

  // Drops every reference but keeps the vectors' memory (also each launch's buffer list).
  void clear() {
    for (auto& l : launches) {
      l.program.reset();
      l.buffers.clear();
    }
    copies.clear();
    results.clear();
    fresh.clear();
  }
};

// The work of a cached plan on this realize's buffers (new ones for its intermediates and
// outputs), into `w` (cleared; its vectors' memory is reused). With `launch_now`, the kernels run
// here, straight from the plan, and `w` gets no launches: no Launch is built, so no reference is
// taken and dropped on each program and buffer (atomic adds, in the eager call's critical path).
void plan_work(const Plan& plan, const GraphKey& key, Work& w, bool launch_now) {
  w.fresh.reserve(plan.fresh.size());
  for (auto& [dt, n] : plan.fresh) w.fresh.push_back(std::make_shared<ir::Storage>(dt, n));
  auto ref = [&](PlanRef r) -> const StorageRef& {
    return r >= 0 ? key.storage(r) : w.fresh[static_cast<size_t>(-r - 1)];
  };
  if (launch_now) {
    w.launches.clear();  // a reused Work keeps its size otherwise
    for (const Plan::Item& item : plan.items)
      launch_on(*item.program, item.buffers.size(),
                [&](size_t i) { return ref(item.buffers[i]).get(); });
  } else {
    w.launches.resize(plan.items.size());
  }
  for (size_t i = 0; i < w.launches.size(); i++) {
    Launch& l = w.launches[i];
    l.program = plan.items[i].program;
    l.buffers.reserve(plan.items[i].buffers.size());
    for (PlanRef r : plan.items[i].buffers) l.buffers.push_back(ref(r));
  }
  for (auto& [from, to] : plan.copies) w.copies.push_back({ref(from), ref(to)});
  w.results.reserve(plan.results.size());
  for (PlanRef r : plan.results) w.results.push_back(ref(r));
}

// Schedules the roots and gets their programs (memory cache, else one compile batch); stores
// the plan when `key` is set.
Work schedule_work(const std::vector<schedule::Root>& roots, runtime::Device& dev, bool defer,
                   const GraphKey* key) {
  const Context& ctx = Context::get();
  auto& stats = runtime_stats();
  double t0 = now();
  schedule::Schedule sched = schedule::create_schedule(roots);
  double t_sched = now() - t0;

  std::vector<schedule::Kernel> simplified;
  std::vector<std::string> keys;
  for (auto& item : sched.items) {
    simplified.push_back(schedule::simplify(item.kernel));
    keys.push_back(dev.name() + ":" + simplified.back().key());
  }
  std::vector<std::shared_ptr<runtime::Program>> progs(sched.items.size());
  std::vector<const schedule::Kernel*> missing;
  std::vector<size_t> missing_idx;
  size_t hits = 0;
  CompileOnlyState* const co = t_compile_only;
  {
    auto& cache = program_cache();
    std::lock_guard<std::mutex> l(cache.mu);
    std::unordered_map<std::string, size_t> first_missing;
    for (size_t i = 0; i < keys.size(); i++) {
      auto it = cache.programs.find(keys[i]);
      if (it != cache.programs.end()) {
        progs[i] = it->second;
        hits++;
      } else if (co && co->by_key.count(keys[i])) {
        progs[i] = co->by_key[keys[i]];  // prepared by an earlier realize of this scope
        hits++;
      } else if (!first_missing.count(keys[i])) {
        first_missing[keys[i]] = i;
        missing.push_back(&simplified[i]);
        missing_idx.push_back(i);
      }
    }
  }
  double t_compile = 0;
  int64_t compiler_runs = 0;
  if (!missing.empty() && co) {  // prepared now, compiled as one batch by CompileOnly::finish
    const auto prepared = dev.prepare(missing);
    co->device = &dev;
    for (size_t j = 0; j < prepared.size(); j++) {
      co->programs.push_back(prepared[j]);
      co->keys.push_back(keys[missing_idx[j]]);
      co->by_key.emplace(keys[missing_idx[j]], prepared[j]);
    }
    for (size_t i = 0; i < keys.size(); i++)
      if (!progs[i]) progs[i] = co->by_key.at(keys[i]);
  } else if (!missing.empty()) {
    double c0 = now();
    const runtime::CompileCounters before = runtime::compile_counters_this_thread();
    const auto built = defer ? dev.prepare(missing) : dev.compile(missing);
    t_compile = now() - c0;
    stat_add(stats.kernels_compiled, static_cast<int64_t>(built.size()));
    t_tally.kernels += static_cast<int64_t>(built.size());
    if (defer) {
      Deferred& d = deferred();
      std::lock_guard<std::mutex> lock(d.mu);
      d.device = &dev;
      for (size_t j = 0; j < built.size(); j++) {
        d.unbuilt.push_back(built[j]);
        d.unbuilt_keys.push_back(keys[missing_idx[j]]);
      }
      g_queue_nonempty.store(true, std::memory_order_release);
      ir::Storage::set_before_data_hook(flush_deferred_hook);
    } else {
      stat_add(stats.compile_batches);
    }
    compiler_runs = add_compile_stats(t_compile, before);
    auto& cache = program_cache();
    std::lock_guard<std::mutex> l(cache.mu);
    for (size_t j = 0; j < built.size(); j++) cache.programs[keys[missing_idx[j]]] = built[j];
    for (size_t i = 0; i < keys.size(); i++)
      if (!progs[i]) progs[i] = cache.programs.at(keys[i]);
  }
  if (ctx.debug >= 1 && !missing.empty() && dev.name() == "cpu") {
    static std::once_flag target_printed;  // the target is fixed for the process: print it once
    std::call_once(target_printed, [] {
      std::fprintf(stderr, "target: %s\n", runtime::host_target().str().c_str());
    });
  }
  if (ctx.debug >= 1)
    std::fprintf(stderr,
                 "realize: %zu kernels (%zu cached, %zu %s in %.1f ms, %lld compiler "
                 "processes), %d extra materialised, schedule %.2f ms%s\n",
                 sched.items.size(), hits, missing.size(),
                 co      ? "prepared for the compile-only batch"
                 : defer ? "prepared for the deferred batch"
                         : "compiled",
                 t_compile * 1e3, static_cast<long long>(compiler_runs), sched.materialised_extra,
                 t_sched * 1e3, key ? ", plan cache miss" : "");
  // While launches are deferred, programs (this realize's or an earlier one's, found in the
  // program cache) may not be built yet, and a failed batch build forgets them: only plans made
  // outside a deferred scope, whose programs are built, are kept.
  if (key && !defer && !co) store_plan(*key, sched, progs);
  if (ctx.graph) write_realize_graphs(roots, sched, progs, ctx.graph_dir);

  Work w;
  w.launches.reserve(sched.items.size());
  for (size_t i = 0; i < sched.items.size(); i++)
    w.launches.push_back(Launch{progs[i], std::move(sched.items[i].buffers)});
  w.copies = std::move(sched.copies);
  w.results = std::move(sched.results);
  return w;
}

// In-place targets: values outside this realize that read their current data keep a copy.
void preserve_target_readers(const std::vector<schedule::Root>& roots,
                             const std::vector<const ir::Node*>& holders) {
  std::vector<std::shared_ptr<ir::Storage>> targets;
  for (auto& r : roots)
    if (r.target && std::find(targets.begin(), targets.end(), r.target) == targets.end())
      targets.push_back(r.target);
  if (targets.empty()) return;
  std::unordered_map<const ir::Node*, long> owned;  // roots entries + holders
  for (auto& r : roots) owned[r.node.get()]++;
  for (const ir::Node* n : holders) owned[n]++;
  std::vector<std::pair<ir::NodeRef, long>> handles;
  for (auto& r : roots)
    if (owned.count(r.node.get())) {
      handles.push_back({r.node, owned[r.node.get()] + 1});  // + the handle itself
      owned.erase(r.node.get());
    }
  preserve_for_readers(targets, handles);
}

// The work of the roots: from the plan cache (plan_cache.h) when it holds their graph, else from a
// fresh schedule. GRAPH=1 schedules every realize, to draw it. `launch_now`: a hit's kernels may
// run here (plan_work).
void find_work(const std::vector<schedule::Root>& roots, bool defer, bool launch_now, Work& w) {
  const Context& ctx = Context::get();
  auto& stats = runtime_stats();
  runtime::Device& dev = runtime::get_device(ctx.device);
  thread_local GraphKey key;
  const bool cacheable = ctx.plan_cache && !ctx.graph && key.build(roots, dev.name());
  std::shared_ptr<const Plan> plan = cacheable ? find_plan(key) : nullptr;
  if (!plan) {
    if (cacheable) stat_add(stats.plan_cache_misses);
    w = schedule_work(roots, dev, defer, cacheable ? &key : nullptr);
    return;
  }
  stat_add(stats.plan_cache_hits);
  if (ctx.debug >= 1)
    std::fprintf(stderr, "realize: %zu kernels (plan cache hit), %d extra materialised\n",
                 plan->items.size(), plan->materialised_extra);
  plan_work(*plan, key, w, launch_now && ctx.debug < 4);
  done_with_plan(key, std::move(plan));
}

// The kernels, then the copies into in-place targets.
void run_work(const Work& w) {
  if (Context::get().debug >= 4)
    for (auto& l : w.launches)
      if (!l.program->source.empty()) std::fprintf(stderr, "%s\n", l.program->source.c_str());
  for (auto& l : w.launches) {
    if (g_hook) g_hook(l);
    run_launch(l);
  }
  for (auto& [src, dst] : w.copies) run_launch(Launch{nullptr, {dst, src}});
}

// In-place roots: the value goes into the target (through a copy when the schedule computed it
// elsewhere), and each target gets one new version.
void write_targets(const std::vector<schedule::Root>& roots, std::vector<StorageRef>& results) {
  std::unordered_set<const ir::Storage*> written;
  for (size_t r = 0; r < roots.size(); r++) {
    const StorageRef& target = roots[r].target;
    if (!target) continue;
    if (results[r] != target) {
      run_launch(Launch{nullptr, {target, results[r]}});
      results[r] = target;
    }
    if (written.insert(target.get()).second) target->bump_version();
  }
}

}  // namespace

int preserve_for_readers(const std::vector<std::shared_ptr<ir::Storage>>& targets,
                         const std::vector<std::pair<ir::NodeRef, long>>& handles) {
  const int copies = ir::preserve_for_readers(targets, handles, copy_storage);
  stat_add(runtime_stats().buffers_preserved, copies);
  return copies;
}

std::vector<StorageRef> realize(const std::vector<schedule::Root>& roots,
                                const std::vector<const ir::Node*>& holders) {
  if (roots.empty()) return {};
  const bool no_launch = t_compile_only != nullptr;  // a CompileOnly scope
  const bool defer = !no_launch && t_defer_depth > 0 && !g_hook;
  if (!defer) flush_deferred();  // another thread's queue: its values first
  stat_add(runtime_stats().realizes);
  preserve_target_readers(roots, holders);
  support::ThreadSpare<Work> work;  // its vectors reused by the next realize on this thread
  Work& w = *work;
  // A hit's kernels run as the plan is read, unless a capture records them or they are queued.
  find_work(roots, defer, !no_launch && !defer && !g_hook, w);
  if (!no_launch) run_work(w);
  write_targets(roots, w.results);
  return std::move(w.results);
}

CompileTally compile_tally_this_thread() { return t_tally; }
bool compile_only() { return t_compile_only != nullptr; }

CompileOnly::CompileOnly() {
  if (t_compile_only) return;  // nested: the outer scope compiles
  state_ = std::make_unique<CompileOnlyState>();
  t_compile_only = state_.get();
}

CompileOnly::~CompileOnly() {
  if (state_) t_compile_only = nullptr;
}

CompileTally CompileOnly::finish() {
  CompileTally out;
  if (!state_) return out;
  t_compile_only = nullptr;
  const std::unique_ptr<CompileOnlyState> st = std::move(state_);
  // Programs that another thread compiled meanwhile are not built again.
  std::vector<std::shared_ptr<runtime::Program>> todo;
  std::vector<std::string> keys;
  {
    auto& cache = program_cache();
    std::lock_guard<std::mutex> l(cache.mu);
    for (size_t i = 0; i < st->programs.size(); i++)
      if (!cache.programs.count(st->keys[i])) {
        todo.push_back(st->programs[i]);
        keys.push_back(st->keys[i]);
      }
  }
  if (todo.empty()) return out;
  auto& stats = runtime_stats();
  const CompileTally t0 = t_tally;
  const double c0 = now();
  const runtime::CompileCounters before = runtime::compile_counters_this_thread();
  st->device->build(todo);  // throws CompileError; nothing was cached, so nothing to forget
  const double dt = now() - c0;
  stat_add(stats.compile_batches);
  stat_add(stats.kernels_compiled, static_cast<int64_t>(todo.size()));
  t_tally.kernels += static_cast<int64_t>(todo.size());
  add_compile_stats(dt, before);
  stat_add(stats.compile_ahead_seconds, dt);
  stat_add(stats.kernels_compiled_ahead, static_cast<int64_t>(todo.size()));
  {
    auto& cache = program_cache();
    std::lock_guard<std::mutex> l(cache.mu);
    for (size_t i = 0; i < todo.size(); i++) cache.programs.emplace(keys[i], todo[i]);
  }
  out.kernels = t_tally.kernels - t0.kernels;
  out.seconds = t_tally.seconds - t0.seconds;
  out.compiler_runs = t_tally.compiler_runs - t0.compiler_runs;
  out.kernels_from_compiler = t_tally.kernels_from_compiler - t0.kernels_from_compiler;
  out.kernels_from_disk_cache = t_tally.kernels_from_disk_cache - t0.kernels_from_disk_cache;
  if (Context::get().debug >= 1)
    std::fprintf(stderr,
                 "compile-only: %zu kernels compiled as one batch in %.1f ms (%lld from the disk "
                 "cache, %lld compiler processes), nothing launched\n",
                 todo.size(), dt * 1e3, static_cast<long long>(out.kernels_from_disk_cache),
                 static_cast<long long>(out.compiler_runs));
  if (Context::get().debug >= 4)
    for (auto& p : todo) std::fprintf(stderr, "%s\n", p->source.c_str());
  return out;
}

}  // namespace ember::engine
