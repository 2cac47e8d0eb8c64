#include "ember/context.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "ember/profile.h"
#include "ember/support/settings.h"
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
    const support::Settings& s = support::settings();
    Context x;
    x.debug = s.debug;
    x.device = s.device;
    x.profile = s.profile;
    x.profile_path = !s.profile_file.empty()
                         ? s.profile_file
                         : "ember-trace-" + std::to_string(static_cast<long>(getpid())) + ".json";
    x.graph = s.graph;
    x.graph_dir = s.graph_dir;
    x.plan_cache = s.plan_cache;
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
