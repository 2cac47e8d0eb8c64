#include "search/tune_key.h"

#include "ember/support/thread_pool.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"
#include "search_revision.h"

namespace ember::search {

std::string ember_version() {
  return std::string(EMBER_VERSION) + " (revision " + EMBER_BUILD_REVISION + ")";
}

TuneKey tune_key(const std::string& kernel_key) {
  const runtime::CompilerInfo& cc = runtime::compiler_info();
  TuneKey k;
  k.kernel = kernel_key;
  k.cpu = runtime::cpu_model();
  k.target = runtime::host_target().str();
  k.threads = support::num_threads();
  k.compiler = cc.path + " (" + cc.version + ")";
  k.flags = cc.flags + " " + cc.libs;
  k.ember = ember_version();
  return k;
}

}  // namespace ember::search
