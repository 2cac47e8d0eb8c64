// ember/tune.h — the schedule search's cache (issue 40; BEAM=n in ember/context.h): the plans a
// search chose, one row per kernel and machine, in <kernel cache directory>/tune.sqlite.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

/// One row of the tune cache: a kernel (its name, e.g. r_4_128_128, and the plan a search chose
/// for it, in DEBUG=3's words), what the search measured, and the machine the row belongs to.
struct TunedKernel {
  std::string kernel;       // Kernel name (loop space), e.g. "r_4_128_128"
  std::string plan;         // e.g. "dot: UPCAST(0,4) UPCAST(1,2) VECTORIZE(2,16) ..."
  double heuristic_us = 0;  // microseconds per launch under the heuristic's plan (median)
  double tuned_us = 0;      // and under the chosen plan
  int64_t candidates = 0;   // plans timed
  double search_seconds = 0;
  int64_t threads = 0;
  std::string target;                                 // ISA level, vector width, registers, caches
  std::string cpu, compiler, ember_version, created;  // created: UTC "YYYY-MM-DD HH:MM:SS"
};

/// The cache file: <kernel cache directory>/tune.sqlite ($EMBER_CACHE_DIR, ...).
std::string tune_cache_path();

/// Every row, oldest first; none when there is no cache file. Throws ember::Error naming the file
/// and the reason when it cannot be read (locked, another schema version, not a database).
std::vector<TunedKernel> tune_cache_rows();

/// Empties the cache and returns how many rows it held. A file of another schema version or not a
/// database is removed (the next search starts a new one). Throws ember::Error when it cannot be
/// written (read-only, locked).
int64_t clear_tune_cache();

}  // namespace ember
