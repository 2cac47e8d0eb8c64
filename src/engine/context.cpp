#include "ember/context.h"

#include <cstdlib>

#include "runtime/cpu/target.h"
#include "runtime/thread_pool.h"

namespace ember {

Context& Context::get() {
  static Context c = [] {
    Context x;
    if (const char* d = std::getenv("DEBUG")) x.debug = std::atoi(d);
    if (const char* d = std::getenv("EMBER_DEVICE"); d && *d) x.device = d;
    return x;
  }();
  return c;
}

RuntimeStats& runtime_stats() {
  static RuntimeStats s;
  return s;
}
void reset_runtime_stats() { runtime_stats() = RuntimeStats(); }

void set_num_threads(int n) { runtime::set_num_threads(n); }
int get_num_threads() { return runtime::num_threads(); }

std::string kernel_target() { return runtime::host_target().str(); }

}  // namespace ember
