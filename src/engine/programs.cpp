#include "engine/programs.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "ember/context.h"
#include "ember/support/clock.h"
#include "engine/launch_sink.h"
#include "engine/stats.h"
#include "engine/tune.h"
#include "runtime/cpu/compiler.h"

namespace ember::engine {

// A CompileOnly scope of this thread: the programs its realizes prepared (not in the program
// cache, which holds only programs that are or will be built by their thread's queue).
struct CompileOnlyState {
  std::vector<std::shared_ptr<runtime::Program>> programs;
  std::vector<std::string> keys;
  std::unordered_map<std::string, std::shared_ptr<runtime::Program>> by_key;
  runtime::Device* device = nullptr;
  detail::ThreadSink saved;
};

namespace detail {
void queue_programs(runtime::Device& dev, std::vector<std::shared_ptr<runtime::Program>> ps,
                    std::vector<std::string> keys);  // launch_sink.cpp
}  // namespace detail

namespace {

struct ProgramCache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<runtime::Program>> programs;
};
ProgramCache& program_cache() {
  static ProgramCache c;
  return c;
}

thread_local CompileTally t_tally;

double now() { return support::now_seconds(); }

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

// Looks the kernels up (`keys`, one per kernel) in the program cache and the scope's programs;
// returns the first kernel of each distinct missing key.
std::vector<size_t> look_up(const std::vector<std::string>& keys, CompileOnlyState* co,
                            ProgramBatch& out) {
  std::vector<size_t> missing;
  auto& cache = program_cache();
  std::lock_guard<std::mutex> l(cache.mu);
  std::unordered_map<std::string, size_t> first_missing;
  for (size_t i = 0; i < keys.size(); i++) {
    auto it = cache.programs.find(keys[i]);
    if (it != cache.programs.end()) {
      out.programs[i] = it->second;
      out.cached++;
    } else if (co && co->by_key.count(keys[i])) {
      out.programs[i] = co->by_key[keys[i]];  // prepared by an earlier realize of this scope
      out.cached++;
    } else if (first_missing.emplace(keys[i], i).second) {
      missing.push_back(i);
    }
  }
  return missing;
}

// Unbuilt programs of `todo` (the kernels of keys[missing[j]]): on the cpu device, with the plan
// the tune cache holds where it holds one (tune.h), else the device's own.
std::vector<std::shared_ptr<runtime::Program>> prepare(
    runtime::Device& dev, const std::vector<const schedule::Kernel*>& todo,
    const std::vector<std::string>& keys, const std::vector<size_t>& missing) {
  if (dev.name() != "cpu") return dev.prepare(todo);
  const size_t skip = dev.name().size() + 1;  // keys are "<device>:<kernel key>"
  std::vector<std::shared_ptr<runtime::Program>> out(todo.size());
  std::vector<const schedule::Kernel*> rest;
  for (size_t j = 0; j < todo.size(); j++) {
    out[j] = prepare_tuned_program(*todo[j], keys[missing[j]].substr(skip));
    if (!out[j]) rest.push_back(todo[j]);
  }
  if (rest.size() == todo.size()) return dev.prepare(todo);
  auto heuristic = dev.prepare(rest);
  for (size_t j = 0, r = 0; j < todo.size(); j++)
    if (!out[j]) out[j] = std::move(heuristic[r++]);
  return out;
}

}  // namespace

CompileTally compile_tally_this_thread() { return t_tally; }

ProgramBatch get_programs(const std::vector<schedule::Kernel>& kernels, runtime::Device& dev) {
  ProgramBatch out;
  out.programs.resize(kernels.size());
  std::vector<std::string> keys;
  keys.reserve(kernels.size());
  for (auto& k : kernels) keys.push_back(dev.name() + ":" + k.key());
  const detail::ThreadSink& sink = detail::thread_sink();
  CompileOnlyState* const co = sink.mode == SinkMode::CompileOnly ? sink.compile_only : nullptr;
  const std::vector<size_t> missing = look_up(keys, co, out);
  out.missing = missing.size();
  if (missing.empty()) return out;
  std::vector<const schedule::Kernel*> todo;
  for (size_t i : missing) todo.push_back(&kernels[i]);
  if (co) {  // prepared now, compiled as one batch by CompileOnly::finish
    const auto prepared = prepare(dev, todo, keys, missing);
    co->device = &dev;
    for (size_t j = 0; j < prepared.size(); j++) {
      co->programs.push_back(prepared[j]);
      co->keys.push_back(keys[missing[j]]);
      co->by_key.emplace(keys[missing[j]], prepared[j]);
    }
    for (size_t i = 0; i < keys.size(); i++)
      if (!out.programs[i]) out.programs[i] = co->by_key.at(keys[i]);
    return out;
  }
  const bool queue = sink.mode == SinkMode::Queue;
  const double c0 = now();
  const runtime::CompileCounters before = runtime::compile_counters_this_thread();
  auto built = prepare(dev, todo, keys, missing);
  if (!queue) dev.build(built);
  out.seconds = now() - c0;
  stat_add(runtime_stats().kernels_compiled, static_cast<int64_t>(built.size()));
  t_tally.kernels += static_cast<int64_t>(built.size());
  if (queue) {
    std::vector<std::string> built_keys;
    for (size_t i : missing) built_keys.push_back(keys[i]);
    detail::queue_programs(dev, built, std::move(built_keys));
  } else {
    stat_add(runtime_stats().compile_batches);
  }
  out.compiler_runs = add_compile_stats(out.seconds, before);
  out.from_disk =
      runtime::compile_counters_this_thread().kernels_from_disk - before.kernels_from_disk;
  auto& cache = program_cache();
  std::lock_guard<std::mutex> l(cache.mu);
  for (size_t j = 0; j < built.size(); j++) cache.programs[keys[missing[j]]] = built[j];
  for (size_t i = 0; i < keys.size(); i++)
    if (!out.programs[i]) out.programs[i] = cache.programs.at(keys[i]);
  return out;
}

std::pair<double, int64_t> detail::build_queued(
    runtime::Device& dev, const std::vector<std::shared_ptr<runtime::Program>>& ps,
    const std::vector<std::string>& keys) {
  const double c0 = now();
  const runtime::CompileCounters before = runtime::compile_counters_this_thread();
  try {
    dev.build(ps);
  } catch (...) {  // the programs stay unbuilt: forget them, a later realize prepares them again
    auto& cache = program_cache();
    std::lock_guard<std::mutex> l(cache.mu);
    for (auto& k : keys) cache.programs.erase(k);
    throw;
  }
  const double dt = now() - c0;
  stat_add(runtime_stats().compile_batches);
  const int64_t runs = add_compile_stats(dt, before);
  return {dt, runs};
}

CompileOnly::CompileOnly() {
  detail::ThreadSink& sink = detail::thread_sink();
  if (sink.mode == SinkMode::CompileOnly) return;  // nested: the outer scope compiles
  state_ = std::make_unique<CompileOnlyState>();
  state_->saved = sink;
  sink.mode = SinkMode::CompileOnly;
  sink.compile_only = state_.get();
}

CompileOnly::~CompileOnly() {
  if (state_) detail::thread_sink() = state_->saved;
}

CompileTally CompileOnly::finish() {
  CompileTally out;
  if (!state_) return out;
  detail::thread_sink() = state_->saved;
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
