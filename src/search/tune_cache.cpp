// The search's SQLite cache (tune_cache.h). Every statement is checked; the first failure turns
// the cache off for the process (why() says what failed), so a damaged, locked or foreign file
// costs the run its tuned plans and nothing else.
#include "search/tune_cache.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <utility>

namespace ember::search {

namespace {

constexpr const char* kCreate =
    "CREATE TABLE schema_version(version INTEGER NOT NULL);"
    "CREATE TABLE plans("
    " kernel TEXT NOT NULL, cpu TEXT NOT NULL, target TEXT NOT NULL, threads INTEGER NOT NULL,"
    " compiler TEXT NOT NULL, flags TEXT NOT NULL, ember TEXT NOT NULL,"
    " name TEXT NOT NULL, plan TEXT NOT NULL, heuristic_us REAL NOT NULL, best_us REAL NOT NULL,"
    " candidates INTEGER NOT NULL, search_seconds REAL NOT NULL, created TEXT NOT NULL,"
    " PRIMARY KEY(kernel, cpu, target, threads, compiler, flags, ember));";

// A prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &st_, nullptr); }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  void text(int i, const std::string& s) {
    sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void integer(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); }
  void real(int i, double v) { sqlite3_bind_double(st_, i, v); }
  // The key's seven columns from parameter `first` on.
  void key(int first, const TuneKey& k) {
    text(first, k.kernel);
    text(first + 1, k.cpu);
    text(first + 2, k.target);
    integer(first + 3, k.threads);
    text(first + 4, k.compiler);
    text(first + 5, k.flags);
    text(first + 6, k.ember);
  }
  int step() { return sqlite3_step(st_); }
  std::string column_text(int i) {
    const unsigned char* t = sqlite3_column_text(st_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t column_int(int i) { return sqlite3_column_int64(st_, i); }
  double column_real(int i) { return sqlite3_column_double(st_, i); }

 private:
  sqlite3_stmt* st_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TuneCache::TuneCache(std::string path, bool writable) : path_(std::move(path)) {
  if (!writable && !file_exists(path_)) return;  // no cache yet: empty, nothing to open
  if (open(writable)) check_schema(writable);
}

TuneCache::~TuneCache() { sqlite3_close_v2(db_); }

bool TuneCache::fail(const std::string& what) {
  if (!why_.empty()) return false;
  std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
  const int code = db_ ? sqlite3_extended_errcode(db_) & 0xff : SQLITE_CANTOPEN;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) msg = "locked by another process";
  if (code == SQLITE_READONLY) msg = "read-only";
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
    msg = "not an ember tune cache (" + msg + ")";
  why_ = what + ": " + msg;
  return false;
}

bool TuneCache::exec(const char* sql) {
  return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

bool TuneCache::open(bool writable) {
  const int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(path_.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK)
    return fail("cannot open it");
  sqlite3_busy_timeout(db_, kBusyMillis);
  // SQLite opens a write-protected file read-only without an error: a search could not keep its
  // results.
  if (writable && sqlite3_db_readonly(db_, "main") == 1) {
    why_ = "read-only";
    return false;
  }
  return true;
}

bool TuneCache::check_schema(bool writable) {
  int64_t tables = -1;
  {
    Statement st(db_, "SELECT count(*) FROM sqlite_master WHERE type='table'");
    if (!st.ok() || st.step() != SQLITE_ROW) return fail("cannot read it");
    tables = st.column_int(0);
  }
  if (tables == 0 && writable) {  // a new file: its tables and version, at once
    if (!exec("BEGIN IMMEDIATE") || !exec(kCreate)) return fail("cannot create its tables");
    Statement v(db_, "INSERT INTO schema_version(version) VALUES(?)");
    v.integer(1, kTuneSchemaVersion);
    if (!v.ok() || v.step() != SQLITE_DONE || !exec("COMMIT")) {
      exec("ROLLBACK");
      return fail("cannot create its tables");
    }
    return true;
  }
  Statement st(db_, "SELECT version FROM schema_version");
  if (!st.ok()) {
    why_ = "not an ember tune cache (no schema_version table)";
    return false;
  }
  if (const int rc = st.step(); rc != SQLITE_ROW) {
    if (rc == SQLITE_DONE) {
      why_ = "not an ember tune cache (no schema version)";
      return false;
    }
    return fail("cannot read its schema version");
  }
  if (const int64_t v = st.column_int(0); v != kTuneSchemaVersion) {
    why_ = "schema version " + std::to_string(v) + ", this ember reads version " +
           std::to_string(kTuneSchemaVersion) + " (`ember tune --clear` starts it afresh)";
    return false;
  }
  return true;
}

std::optional<std::string> TuneCache::find(const TuneKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok() || !db_) return std::nullopt;
  Statement st(db_,
               "SELECT plan FROM plans WHERE kernel=? AND cpu=? AND target=? AND threads=? AND "
               "compiler=? AND flags=? AND ember=?");
  if (!st.ok()) return fail("cannot read it"), std::nullopt;
  st.key(1, key);
  const int rc = st.step();
  if (rc == SQLITE_ROW) return st.column_text(0);
  if (rc != SQLITE_DONE) fail("cannot read it");
  return std::nullopt;
}

bool TuneCache::store(const TuneRow& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok() || !db_) return false;
  Statement st(db_,
               "INSERT OR REPLACE INTO plans VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,"
               "datetime('now'))");
  if (!st.ok()) return fail("cannot write it");
  st.key(1, r.key);
  st.text(8, r.name);
  st.text(9, r.plan);
  st.real(10, r.heuristic_us);
  st.real(11, r.best_us);
  st.integer(12, r.candidates);
  st.real(13, r.search_seconds);
  if (st.step() != SQLITE_DONE) return fail("cannot write it");
  return true;
}

std::vector<TuneRow> TuneCache::rows() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TuneRow> out;
  if (!ok() || !db_) return out;
  Statement st(db_,
               "SELECT kernel, cpu, target, threads, compiler, flags, ember, name, plan, "
               "heuristic_us, best_us, candidates, search_seconds, created FROM plans "
               "ORDER BY created, rowid");
  if (!st.ok()) return fail("cannot read it"), out;
  int rc;
  while ((rc = st.step()) == SQLITE_ROW) {
    TuneRow r;
    r.key = {st.column_text(0), st.column_text(1), st.column_text(2), st.column_int(3),
             st.column_text(4), st.column_text(5), st.column_text(6)};
    r.name = st.column_text(7);
    r.plan = st.column_text(8);
    r.heuristic_us = st.column_real(9);
    r.best_us = st.column_real(10);
    r.candidates = st.column_int(11);
    r.search_seconds = st.column_real(12);
    r.created = st.column_text(13);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) fail("cannot read it");
  return out;
}

int64_t TuneCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok()) return -1;
  if (!db_) return 0;
  if (!exec("DELETE FROM plans")) return fail("cannot write it"), -1;
  return sqlite3_changes(db_);
}

}  // namespace ember::search
