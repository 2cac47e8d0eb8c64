#include "ember/context.h"

#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <type_traits>

#include "ember/profile.h"
#include "ember/support/settings.h"
#include "ember/support/thread_pool.h"

#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"
#include "runtime/storage.h"

namespace ember {

namespace {
void write_trace_at_exit() {
  try {
    const std::string& path = Context::get().profile_path;
    write_trace(path);
    write_kernel_table(kernel_table_path(path));
    std::fprintf(stderr, "PROFILE: trace written to %s (kernel table: %s)\n", path.c_str(),
                 kernel_table_path(path).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "PROFILE: %s\n", e.what());
  }
}
}  // namespace

Context& Context::get() {
  static Context c = [] {
    const support::Settings& s = support::settings();
    return Context{.debug = s.debug,
                   .device = s.device,
                   .profile = s.profile,
                   .profile_path =
                       !s.profile_file.empty()
                           ? s.profile_file
                           : "ember-trace-" + std::to_string(static_cast<long>(getpid())) + ".json",
                   .graph = s.graph,
                   .graph_dir = s.graph_dir,
                   .plan_cache = s.plan_cache,
                   .beam = s.beam,
                   .beam_runs = s.beam_runs};
  }();
  static const bool registered = [] {
    if (!c.profile) return false;
    clear_profile();  // constructs the event store before the handler: it outlives the handler
    std::atexit(write_trace_at_exit);
    return true;
  }();
  (void)registered;
  return c;
}

RuntimeStats& runtime_stats() {
  static RuntimeStats s;
  // The runtime's host<->device copies count here (runtime/storage.h).
  static const bool counted =
      (runtime::count_transfers_into(&s.copies_to_device, &s.copies_to_host), true);
  (void)counted;
  return s;
}
void reset_runtime_stats() { runtime_stats() = RuntimeStats(); }

RuntimeStats runtime_stats_snapshot() {
  // Every field, read as atomically as engine/stats.h adds to it (a new field must be added here).
  static_assert(sizeof(RuntimeStats) == 19 * 8, "runtime_stats_snapshot: a field is missing");
  RuntimeStats& s = runtime_stats();
  RuntimeStats out;
  auto get = [](auto& field) {
    return std::atomic_ref<std::remove_reference_t<decltype(field)>>(field).load(
        std::memory_order_relaxed);
  };
  out.realizes = get(s.realizes);
  out.kernels_launched = get(s.kernels_launched);
  out.kernels_compiled = get(s.kernels_compiled);
  out.disk_cache_hits = get(s.disk_cache_hits);
  out.compiler_runs = get(s.compiler_runs);
  out.compile_batches = get(s.compile_batches);
  out.kernels_from_compiler = get(s.kernels_from_compiler);
  out.kernels_from_disk_cache = get(s.kernels_from_disk_cache);
  out.compile_seconds = get(s.compile_seconds);
  out.compile_ahead_seconds = get(s.compile_ahead_seconds);
  out.kernels_compiled_ahead = get(s.kernels_compiled_ahead);
  out.kernel_seconds = get(s.kernel_seconds);
  out.buffers_preserved = get(s.buffers_preserved);
  out.plan_cache_hits = get(s.plan_cache_hits);
  out.plan_cache_misses = get(s.plan_cache_misses);
  out.beam_searches = get(s.beam_searches);
  out.beam_cache_hits = get(s.beam_cache_hits);
  out.copies_to_device = get(s.copies_to_device);
  out.copies_to_host = get(s.copies_to_host);
  return out;
}

void set_num_threads(int n) { support::set_num_threads(n); }
int get_num_threads() { return support::num_threads(); }

std::string kernel_target() { return runtime::host_target().str(); }

std::string kernel_compiler() {
  const runtime::CompilerInfo& c = runtime::compiler_info();
  return c.path + " (" + c.version + ")";
}

}  // namespace ember
