// ember/support/process.h — running a child process without a shell (part of the support floor:
// the kernel compiler and the run records both use it). An argument vector goes to posix_spawn, so
// no path, flag or environment value is ever parsed by /bin/sh (quotes, spaces and `$` are plain
// bytes).
#pragma once
#include <string>
#include <vector>

namespace ember::support {

struct ProcessResult {
  /// Exit status (0-255) when the child exited; -N when a signal N ended it; -1000 - errno when
  /// it could not be started (e.g. -1002: ENOENT).
  int status = 0;
  /// The child's stdout (and stderr unless discarded), interleaved as written, cut at
  /// `max_output` bytes.
  std::string output;
  bool ok() const { return status == 0; }
};

/// Runs argv[0] (an executable path, not looked up on PATH) with arguments argv[1...] and the
/// current environment, in a process group of its own and with default SIGINT/SIGTERM handling;
/// stdin is /dev/null; stderr goes to /dev/null when `discard_stderr`. Waits
/// for it. Never throws for a failing child; throws std::bad_alloc only.
ProcessResult run_process(const std::vector<std::string>& argv, size_t max_output = 1 << 16,
                          bool discard_stderr = false);

/// `argv` as one line for messages, each argument single-quoted where it needs it. Display only:
/// nothing ever passes this to a shell.
std::string display_command(const std::vector<std::string>& argv);

}  // namespace ember::support
