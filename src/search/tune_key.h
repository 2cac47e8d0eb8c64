// The tune cache's key for a kernel on this process's machine (tune_cache.h, TuneKey).
#pragma once
#include <string>

#include "search/tune_cache.h"

namespace ember::search {

/// The key of the kernel whose schedule::Kernel::key() is `kernel_key`: the CPU model, the target
/// (runtime::host_target()), the thread pool's current size, the kernel compiler with its flags
/// (throws CompileError when there is none), and ember's version and source revision.
TuneKey tune_key(const std::string& kernel_key);

/// "<version> (revision <git revision>)", as `ember --version` names it.
std::string ember_version();

}  // namespace ember::search
