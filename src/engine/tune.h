// Tuned plans in the engine (issue 40): kernels get the plan the tune cache holds for them on this
// machine when they are compiled, and with BEAM=n each cpu kernel not yet tuned is searched
// (search/beam_search.h) at its first launch, on the buffers of that launch, before it runs.
//
// The search runs where a kernel launches (run.cpp's loop: a realize's launches, a deferred
// queue's, a jit capture's and its replays'), because only there are its inputs computed.
// Candidates are timed on copies of the outputs (search/kernel_timer.h), then the launch runs the
// chosen plan's program. The heuristic's program is remembered with the one that replaced it, so
// every later launch of it (a cached plan, a queued list, a replay) runs the tuned one.
#pragma once
#include <memory>
#include <string>

#include "runtime/device.h"

namespace ember::engine {

/// For get_programs: an unbuilt program of `k` (simplified; `key` its Kernel::key()) with the plan
/// the tune cache holds for it, or null (no row, no usable cache). Cpu device only.
std::shared_ptr<runtime::Program> prepare_tuned_program(const schedule::Kernel& k,
                                                        const std::string& key);

/// What one launch list's search reports on a terminal: "kernel i of n".
struct SearchCount {
  int i = 0, n = 0;
};

/// Whether `p` still needs a search (BEAM on, a cpu program, not searched or cached yet).
bool needs_search(const runtime::Program& p);

/// The program to launch for `p` on `bufs` (the kernel's buffers, slot order): with BEAM on and a
/// cpu program, the one the tune cache or a search (on these buffers) chose; else `p`.
/// Throws what compiling the chosen plan throws (CompileError).
const std::shared_ptr<runtime::Program>& searched_program(
    const std::shared_ptr<runtime::Program>& p, void* const* bufs, SearchCount& count);

/// Forgets which programs were searched and closes the tune cache (tests: a later launch decides
/// again, as a new process would).
void forget_searches();

}  // namespace ember::engine
