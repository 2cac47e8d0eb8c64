// The tune cache (issue 40; search/tune_cache.h, engine/tune.h). Each run is tune_probe as a real
// child process (a later run of the cache is a new process), with BEAM=1, one timed launch per
// candidate, and its own EMBER_CACHE_DIR: a search finds and keeps a plan and the next run hits it;
// rows for another thread count or ISA level stay apart; read-only, locked, old-schema and corrupt
// caches fall back to the heuristic's plans, right values and a warning said once. Cases that need
// a read-only file run the probe as nobody when root (root writes read-only files).
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../support/child_process.h"
#include "ember/ember.h"
#include "ember/support/settings.h"
#include "search/tune_cache.h"

namespace {

namespace fs = std::filesystem;
using ember_test::kNobody;

struct Child {
  int status = -1;
  std::string out;
  int64_t counter(const std::string& name) const {
    const size_t p = out.find("\n" + name + " ");
    return p == std::string::npos ? -1 : std::stoll(out.substr(p + name.size() + 2));
  }
  bool ok() const { return status == 0 && out.find("result ok\n") != std::string::npos; }
  // How often the output says `text`.
  size_t count(const std::string& text) const {
    size_t n = 0;
    for (size_t p = out.find(text); p != std::string::npos; p = out.find(text, p + 1)) n++;
    return n;
  }
};

Child run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
          std::optional<uid_t> uid = {}) {
  ember_test::ChildOptions o;
  o.env.assign(env.begin(), env.end());
  if (uid) o.uid = *uid;
  const ember_test::ChildResult r = ember_test::run_child(argv, o);
  return {r.status, "\n" + r.output};  // counters are found after a newline
}

void sql(const fs::path& db, const char* text) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(h, text, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  sqlite3_close(h);
}

class TuneCache : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/ember-tune-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    base_ = templ;
    chmod(base_.c_str(), 0755);  // nobody must reach the directories below
    dir_ = base_ / "cache";
    fs::create_directory(dir_);
    chmod(dir_.c_str(), 0700);
    db_ = dir_ / "tune.sqlite";
    probe_ = base_ / "tune_probe";  // nobody may not reach the build tree
    fs::copy_file(EMBER_PROBE_PATH, probe_);
    chmod(probe_.c_str(), 0755);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  Child probe(std::map<std::string, std::string> env, std::optional<uid_t> uid = {}) {
    env.emplace("EMBER_CACHE_DIR", dir_.string());
    env.emplace("BEAM", "1");
    env.emplace("EMBER_BEAM_RUNS", "1");
    env.emplace("TMPDIR", base_.string());
    env.emplace("EMBER_THREADS", "2");
    return run({probe_.string()}, env, uid);
  }
  // Rows of the cache file, read as `ember tune --list` reads them.
  std::vector<ember::TunedKernel> rows() {
    const std::string saved = ember::support::settings().cache_dir;
    ember::support::settings().cache_dir = dir_.string();
    std::vector<ember::TunedKernel> r;
    try {
      r = ember::tune_cache_rows();
    } catch (...) {
      ember::support::settings().cache_dir = saved;
      throw;
    }
    ember::support::settings().cache_dir = saved;
    return r;
  }
  // A search has filled the cache: the probe's two kernels.
  void fill() {
    const Child c = probe({});
    ASSERT_TRUE(c.ok()) << c.out;
    ASSERT_EQ(c.counter("searches"), 2) << c.out;
  }
  // A run that must fall back: right values, no search, no hit, the warning (naming `why`) once.
  void expect_fallback(const Child& c, const std::string& why) {
    EXPECT_TRUE(c.ok()) << c.out;
    EXPECT_EQ(c.counter("searches"), 0) << c.out;
    EXPECT_EQ(c.counter("hits"), 0) << c.out;
    EXPECT_EQ(c.count("ember: warning: tune cache"), 1u) << c.out;
    EXPECT_EQ(c.count("kernels keep the heuristic's plans"), 1u) << c.out;
    EXPECT_NE(c.out.find(why), std::string::npos) << c.out;
  }
  fs::path base_, dir_, db_, probe_;
};

TEST_F(TuneCache, SearchKeepsPlansAndTheNextRunHitsThem) {
  fill();
  const auto r = rows();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].threads, 2);
  for (const auto& row : r) {
    EXPECT_GT(row.candidates, 1) << row.kernel;
    EXPECT_GT(row.heuristic_us, 0) << row.kernel;
    EXPECT_LE(row.tuned_us, row.heuristic_us) << row.kernel;  // never a slower plan
  }
  const Child again = probe({});
  EXPECT_TRUE(again.ok()) << again.out;
  EXPECT_EQ(again.counter("searches"), 0) << again.out;
  EXPECT_EQ(again.counter("hits"), 2) << again.out;
  // Without BEAM the cache's plans are used too; nothing is searched.
  const Child plain = probe({{"BEAM", "0"}});
  EXPECT_TRUE(plain.ok()) << plain.out;
  EXPECT_EQ(plain.counter("searches"), 0) << plain.out;
  EXPECT_EQ(plain.counter("hits"), 2) << plain.out;
  EXPECT_EQ(plain.count("warning"), 0u) << plain.out;
  EXPECT_EQ(rows().size(), 2u);
}

// `ember tune --list` shows the rows, `--clear` empties the cache; exactly one of them is asked.
TEST_F(TuneCache, TuneCommandListsAndClears) {
  fill();
  const std::map<std::string, std::string> env = {{"EMBER_CACHE_DIR", dir_.string()}};
  Child list = run({EMBER_CLI_PATH, "tune", "--list"}, env);
  EXPECT_EQ(list.status, 0) << list.out;
  EXPECT_EQ(list.count(db_.string() + ": 2 kernels"), 1u) << list.out;
  EXPECT_EQ(list.count("r_7_5_13 "), 1u) << list.out;
  EXPECT_EQ(list.count("r_7_13 "), 1u) << list.out;
  EXPECT_EQ(list.count(" 2 threads "), 2u) << list.out;
  const Child clear = run({EMBER_CLI_PATH, "tune", "--clear"}, env);
  EXPECT_EQ(clear.status, 0) << clear.out;
  EXPECT_EQ(clear.count("2 rows removed"), 1u) << clear.out;
  list = run({EMBER_CLI_PATH, "tune", "--list"}, env);
  EXPECT_EQ(list.count(": 0 kernels"), 1u) << list.out;
  for (const std::vector<std::string>& bad : {std::vector<std::string>{EMBER_CLI_PATH, "tune"},
                                              {EMBER_CLI_PATH, "tune", "--list", "--clear"}}) {
    const Child c = run(bad, env);
    EXPECT_NE(c.status, 0) << c.out;
  }
  // A corrupt cache: --list fails naming the file and the reason.
  std::ofstream(db_)
      << "this is not a database, but it is long enough to be read as a header........";
  list = run({EMBER_CLI_PATH, "tune", "--list"}, env);
  EXPECT_EQ(list.status, 1) << list.out;
  EXPECT_EQ(list.count("ember: error: tune cache " + db_.string() + ": "), 1u) << list.out;
  EXPECT_EQ(list.count("not an ember tune cache"), 1u) << list.out;
}

TEST_F(TuneCache, ThreadCountAndIsaKeepTheirOwnRows) {
  fill();
  const Child one = probe({{"EMBER_THREADS", "1"}});
  EXPECT_TRUE(one.ok()) << one.out;
  EXPECT_EQ(one.counter("hits"), 0) << one.out;  // the 2-thread rows are not the 1-thread ones
  EXPECT_EQ(one.counter("searches"), 2) << one.out;
  const Child scalar = probe({{"EMBER_ISA", "scalar"}});
  EXPECT_TRUE(scalar.ok()) << scalar.out;
  EXPECT_EQ(scalar.counter("hits"), 0) << scalar.out;
  EXPECT_EQ(scalar.counter("searches"), 2) << scalar.out;
  EXPECT_EQ(rows().size(), 6u);
  for (const char* threads : {"1", "2"}) {
    const Child c = probe({{"EMBER_THREADS", threads}});
    EXPECT_EQ(c.counter("hits"), 2) << c.out;
    EXPECT_EQ(c.counter("searches"), 0) << c.out;
  }
}

TEST_F(TuneCache, EveryKeyFieldSeparatesRows) {
  ember::search::TuneCache c(db_.string(), true);
  ASSERT_TRUE(c.ok()) << c.why();
  const ember::search::TuneKey key{"K7,5,13", "cpu", "avx2 (...)", 2, "cc (12)", "-O3", "0.1.0"};
  ASSERT_TRUE(c.store({key, "r_7_5_13", "loop 3 1 1 1 1 0", 2, 1, 3, 0.5, ""}));
  EXPECT_EQ(c.find(key), "loop 3 1 1 1 1 0");
  using Key = ember::search::TuneKey;
  // One change of each of the key's seven fields.
  const std::function<void(Key&)> changes[] = {[](Key& k) { k.kernel += "x"; },
                                               [](Key& k) { k.cpu += "x"; },
                                               [](Key& k) { k.target = "avx512 (...)"; },
                                               [](Key& k) { k.threads = 1; },
                                               [](Key& k) { k.compiler += "x"; },
                                               [](Key& k) { k.flags += " -g"; },
                                               [](Key& k) { k.ember += "x"; }};
  for (size_t field = 0; field < std::size(changes); field++) {
    Key k = key;
    changes[field](k);
    EXPECT_FALSE(c.find(k)) << "field " << field;
  }
}

TEST_F(TuneCache, CorruptFileFallsBackAndClearRemovesIt) {
  std::ofstream(db_)
      << "this is not a database, but it is long enough to be read as a header........";
  expect_fallback(probe({}), "not an ember tune cache");
  EXPECT_THROW(rows(), ember::Error);
  const std::string saved = ember::support::settings().cache_dir;
  ember::support::settings().cache_dir = dir_.string();
  EXPECT_EQ(ember::clear_tune_cache(), 0);
  ember::support::settings().cache_dir = saved;
  EXPECT_FALSE(fs::exists(db_));
  fill();  // a new cache
}

TEST_F(TuneCache, OldSchemaFallsBack) {
  sql(db_,
      "CREATE TABLE schema_version(version INTEGER NOT NULL); INSERT INTO schema_version VALUES(0);"
      "CREATE TABLE plans(kernel TEXT, plan TEXT);");
  expect_fallback(probe({}), "schema version 0");
  expect_fallback(probe({{"BEAM", "0"}}), "schema version 0");
}

TEST_F(TuneCache, LockedFileFallsBack) {
  fill();
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  expect_fallback(probe({}), "locked by another process");
  sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  const Child after = probe({});
  EXPECT_EQ(after.counter("hits"), 2) << after.out;
}

TEST_F(TuneCache, ReadOnlyFileFallsBack) {
  // Root writes a read-only file: the probe runs as nobody then, in a directory nobody owns.
  std::optional<uid_t> as;
  if (geteuid() == 0) {
    as = kNobody;
    ASSERT_EQ(chown(dir_.c_str(), kNobody, kNobody), 0);
  }
  const Child first = probe({}, as);
  ASSERT_TRUE(first.ok()) << first.out;
  ASSERT_EQ(first.counter("searches"), 2) << first.out;
  ASSERT_EQ(chmod(db_.c_str(), 0444), 0);
  expect_fallback(probe({{"EMBER_THREADS", "1"}}, as), "read-only");
}

}  // namespace
