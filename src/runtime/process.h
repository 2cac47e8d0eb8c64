// The process runner lives in the support floor (ember/support/process.h); the runtime's names.
#pragma once
#include "ember/support/process.h"

namespace ember::runtime {
using support::display_command;
using support::ProcessResult;
using support::run_process;
}  // namespace ember::runtime
