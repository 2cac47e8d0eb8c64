// ember/support/clock.h — the one clock for durations (part of the support floor under every
// layer: header-only, no dependencies).
#pragma once
#include <chrono>

namespace ember::support {

/// Seconds on the monotonic clock (std::chrono::steady_clock): differences are durations; the
/// value itself has no meaning (not wall time).
inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace ember::support
