// ember/support/clock.h — the one clock for durations, and the wall-clock time for names and
// records (part of the support floor under every layer: header-only, no dependencies).
#pragma once
#include <chrono>
#include <ctime>
#include <string>

namespace ember::support {

/// Seconds on the monotonic clock (std::chrono::steady_clock): differences are durations; the
/// value itself has no meaning (not wall time).
inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The wall-clock time now as std::strftime's `format` writes it (at most 63 characters), in UTC
/// or in the local time zone.
inline std::string wall_time(const char* format, bool utc) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (utc)
    gmtime_r(&t, &tm);
  else
    localtime_r(&t, &tm);
  char buf[64];
  return std::strftime(buf, sizeof buf, format, &tm) ? buf : "";
}

}  // namespace ember::support
