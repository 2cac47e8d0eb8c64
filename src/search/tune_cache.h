// The schedule search's cache (issue 40): the plan a search chose for a kernel on this machine,
// kept in SQLite (<kernel cache directory>/tune.sqlite), so that later runs skip the search.
//
// A row's key is everything the timing depends on, compared as whole strings (no hash, so no two
// keys share a row): the kernel's structural key (schedule::Kernel::key(): its loop space, reduce
// axes, dtypes, views with their strides, and every expression), the CPU model, the code-generation
// target (ISA level, vector width, registers, cache sizes), the thread count, the C compiler and
// its flags, and ember's version and source revision.
//
// A cache that cannot be used (read-only, locked by another process past kBusyMillis, written by
// another schema version, or not a database) is never fatal: find() answers nothing and store()
// keeps nothing from then on, and why() says what happened (the caller says so once).
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace ember::search {

/// What a row's timing depends on.
struct TuneKey {
  std::string kernel;    // schedule::Kernel::key()
  std::string cpu;       // /proc/cpuinfo's model name
  std::string target;    // codegen::Target::str(): ISA level, vector width, registers, caches
  int64_t threads = 0;   // the thread pool's size
  std::string compiler;  // path and first line of `--version`
  std::string flags;     // the compiler's flags
  std::string ember;     // version and source revision
};

/// A row: the key, the kernel's name, the chosen plan (codegen::plan_text) and what the search
/// measured (microseconds per launch, median of its timed runs).
struct TuneRow {
  TuneKey key;
  std::string name;
  std::string plan;
  double heuristic_us = 0, best_us = 0;
  int64_t candidates = 0;  // plans timed
  double search_seconds = 0;
  std::string created;  // UTC, "YYYY-MM-DD HH:MM:SS"
};

/// The schema this ember writes and reads (the schema_version table's one row).
inline constexpr int kTuneSchemaVersion = 1;
/// How long a statement waits for another process's lock before the cache is given up.
inline constexpr int kBusyMillis = 1000;

class TuneCache {
 public:
  /// Opens `path`. writable: creates the file and its tables when missing (the directory must
  /// exist); else opens an existing file read-only, and a missing file is an empty cache (not a
  /// failure). Never throws: a failure is kept in why().
  TuneCache(std::string path, bool writable);
  ~TuneCache();
  TuneCache(const TuneCache&) = delete;
  TuneCache& operator=(const TuneCache&) = delete;

  /// The plan text stored for `key`, or nullopt (none, or the cache failed).
  std::optional<std::string> find(const TuneKey& key);
  /// Stores (or replaces) the row of row.key; false when the cache failed.
  bool store(const TuneRow& row);
  /// Every row, oldest first; empty when the cache failed.
  std::vector<TuneRow> rows();
  /// Deletes every row; returns how many, or -1 when the cache failed.
  int64_t clear();

  /// Whether the cache works (a missing file opened read-only works: it is empty).
  bool ok() const { return why_.empty(); }
  /// Why it does not ("" when it does).
  const std::string& why() const { return why_; }
  const std::string& path() const { return path_; }

 private:
  bool open(bool writable);
  bool check_schema(bool writable);
  bool fail(const std::string& what);
  bool exec(const char* sql);

  std::string path_;
  sqlite3* db_ = nullptr;
  std::string why_;
  std::mutex mu_;
};

}  // namespace ember::search
