// ember::compile_ahead (ember/compile_ahead.h): fn inside the engine's compile-only scope.
#include "ember/compile_ahead.h"

#include "engine/realize.h"

namespace ember {

CompileAheadStats compile_ahead(const std::function<void()>& fn) {
  engine::CompileOnly scope;
  fn();
  const engine::CompileTally t = scope.finish();
  return {t.kernels, t.kernels_from_disk_cache, t.compiler_runs, t.seconds};
}

}  // namespace ember
