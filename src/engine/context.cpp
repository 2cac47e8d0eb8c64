#include "ember/context.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "ember/profile.h"
#include "ember/support/thread_pool.h"

#include "runtime/cpu/target.h"

namespace ember {

namespace {
void write_trace_at_exit() {
  try {
    const std::string& path = Context::get().profile_path;
    write_trace(path);
    std::fprintf(stderr, "PROFILE: trace written to %s\n", path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "PROFILE: %s\n", e.what());
  }
}
}  // namespace

Context& Context::get() {
  static Context c = [] {
    Context x;
    if (const char* d = std::getenv("DEBUG")) x.debug = std::atoi(d);
    if (const char* d = std::getenv("EMBER_DEVICE"); d && *d) x.device = d;
    if (const char* d = std::getenv("PROFILE")) x.profile = std::atoi(d) > 0;
    x.profile_path = "ember-trace-" + std::to_string(static_cast<long>(getpid())) + ".json";
    if (const char* d = std::getenv("EMBER_PROFILE_FILE"); d && *d) x.profile_path = d;
    if (const char* d = std::getenv("GRAPH")) x.graph = std::atoi(d) > 0;
    if (const char* d = std::getenv("EMBER_GRAPH_DIR"); d && *d) x.graph_dir = d;
    if (const char* d = std::getenv("EMBER_PLAN_CACHE"); d && *d) x.plan_cache = std::atoi(d) > 0;
    return x;
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
  return s;
}
void reset_runtime_stats() { runtime_stats() = RuntimeStats(); }

void set_num_threads(int n) { support::set_num_threads(n); }
int get_num_threads() { return support::num_threads(); }

std::string kernel_target() { return runtime::host_target().str(); }

}  // namespace ember
