// The compiled-kernel cache (src/runtime/cpu/kernel_cache.h, issue 14 "A kernel cache that is
// safe to share a machine with"). Each case runs kernel_cache_probe as a real child process with
// its own environment (and, where needed, as the user nobody), then inspects the cache directory.
// Cases that need a second user run as root and skip with a message otherwise.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../support/child_process.h"
#include "ember/ember.h"
#include "ember/support/read_file.h"
#include "ember/support/settings.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/kernel_cache.h"

namespace {

namespace fs = std::filesystem;
using ember::runtime::CacheKey;
using ember_test::kNobody;

const char* const kExpected = "result 6112 ";         // sum over i < 64 of 3 i + 1
const char* const kExpectedAlt = "result 9952 ";      // sum over i < 64 of 5 i - 2
const char* const kExpectedBatch = "result 111520 ";  // sum over k <= 10, i < 64 of k i + 1

using Child = ember_test::ChildResult;

// Runs argv with `set` added to and `unset` removed from the environment, optionally as `uid`.
Child run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& set,
          const std::vector<std::string>& unset = {}, std::optional<uid_t> uid = {}) {
  ember_test::ChildOptions o;
  o.env.assign(set.begin(), set.end());
  o.unset_env = unset;
  o.uid = uid.value_or(0);
  return ember_test::run_child(argv, o);
}

int64_t counter(const std::string& out, const std::string& name) {
  const size_t p = out.find(name + " ");
  return p == std::string::npos ? -1 : std::stoll(out.substr(p + name.size() + 1));
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) v.push_back(e.path());
  return v;
}

mode_t mode_of(const fs::path& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

std::string read_all(const fs::path& p) { return ember::support::read_file(p.string()); }

void write_all(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
}

class KernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = ember_test::shared_temp_dir("ember-kcache-test");  // nobody reaches what is below
    tmp_ = base_ / "tmp";
    fs::create_directory(tmp_);
    chmod(tmp_.c_str(), 01777);
    probe_ = ember_test::runnable_copy(EMBER_PROBE_PATH, base_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  // The probe with EMBER_CACHE_DIR = dir and TMPDIR = tmp_.
  Child probe(const fs::path& dir, bool alt = false, std::optional<uid_t> uid = {}) {
    std::vector<std::string> argv = {probe_.string()};
    if (alt) argv.push_back("alt");
    return run(argv, {{"EMBER_CACHE_DIR", dir.string()}, {"TMPDIR", tmp_.string()}}, {}, uid);
  }
  fs::path only_entry(const fs::path& dir) {
    const auto v = entries(dir);
    EXPECT_EQ(v.size(), 1u);
    return v.empty() ? fs::path() : v[0];
  }
  fs::path base_, tmp_, probe_;
};

bool is_root() { return geteuid() == 0; }

TEST_F(KernelCache, ShellMetacharactersInEveryPathAreJustBytes) {
  // The input: EMBER_CACHE_DIR="<dir>';touch <dir>/PWNED;'" and more quoting tricks.
  const std::string evil = "';touch " + base_.string() + "/PWNED;'";
  const fs::path dir = base_ / ("c a\"b $(touch " + base_.string() + "/PWNED2) `x` $HOME" + evil);
  fs::create_directories(tmp_ / "t $x 'q'");
  // The compiler, through a path with the same characters.
  const fs::path cc_dir = base_ / "bin $PATH 'q' \"d\"";
  fs::create_directories(cc_dir);
  const char* sys_cc = access("/usr/bin/cc", X_OK) == 0 ? "/usr/bin/cc" : "/usr/bin/gcc";
  fs::create_symlink(sys_cc, cc_dir / "my cc;$(id)");
  const std::map<std::string, std::string> env = {{"EMBER_CACHE_DIR", dir.string()},
                                                  {"TMPDIR", (tmp_ / "t $x 'q'").string()},
                                                  {"EMBER_CC", (cc_dir / "my cc;$(id)").string()}};
  const Child a = run({EMBER_PROBE_PATH}, env);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find(kExpected), std::string::npos) << a.output;
  EXPECT_EQ(counter(a.output, "compiler_runs"), 1) << a.output;
  EXPECT_FALSE(fs::exists(base_ / "PWNED"));
  EXPECT_FALSE(fs::exists(base_ / "PWNED2"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "PWNED"));
  EXPECT_EQ(mode_of(dir), 0700u);
  const fs::path e = only_entry(dir);  // nothing else left behind: no sources, logs, temps
  EXPECT_EQ(e.extension(), ".so");
  EXPECT_EQ(mode_of(e) & 022, 0u);
  const Child b = run({EMBER_PROBE_PATH}, env);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(counter(b.output, "compiler_runs"), 0) << b.output;
  EXPECT_EQ(counter(b.output, "disk_hits"), 1) << b.output;
  EXPECT_TRUE(entries(tmp_ / "t $x 'q'").empty());
}

TEST_F(KernelCache, TruncatedEntryIsRecompiledNeverRun) {
  const fs::path dir = base_ / "cache";
  ASSERT_EQ(probe(dir).status, 0);
  const fs::path e = only_entry(dir);
  const auto size = fs::file_size(e);
  fs::resize_file(e, size / 2);  // the input: half the object (was SIGBUS in dlopen)
  const Child b = probe(dir);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find(kExpected), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("no ember trailer (truncated"), std::string::npos) << b.output;
  EXPECT_EQ(counter(b.output, "compiler_runs"), 1) << b.output;
  EXPECT_EQ(fs::file_size(e), size);
  const Child c = probe(dir);
  EXPECT_EQ(counter(c.output, "disk_hits"), 1) << c.output;
  // One flipped byte inside the object, size unchanged.
  std::string bytes = read_all(e);
  bytes[bytes.size() / 3] ^= 0x40;
  write_all(e, bytes);
  const Child d = probe(dir);
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_NE(d.output.find("checksum mismatch"), std::string::npos) << d.output;
  EXPECT_EQ(counter(d.output, "compiler_runs"), 1) << d.output;
  // Bytes cut from the middle of the object, trailer kept.
  bytes = read_all(e);
  write_all(e, bytes.substr(0, 1000) + bytes.substr(3000));
  const Child g = probe(dir);
  ASSERT_EQ(g.status, 0) << g.output;
  EXPECT_NE(g.output.find("truncated or extended"), std::string::npos) << g.output;
  EXPECT_EQ(counter(g.output, "compiler_runs"), 1) << g.output;
  // An entry in the old format (no trailer) is rebuilt too.
  bytes = read_all(e);
  write_all(e, bytes.substr(0, bytes.size() - 56));
  const Child f = probe(dir);
  EXPECT_NE(f.output.find("no ember trailer"), std::string::npos) << f.output;
  EXPECT_EQ(counter(f.output, "compiler_runs"), 1) << f.output;
}

TEST_F(KernelCache, ForeignEntryUnderThisKeyIsRecompiled) {
  const fs::path dir = base_ / "cache", other = base_ / "other";
  ASSERT_EQ(probe(dir).status, 0);
  ASSERT_EQ(probe(other, true).status, 0);
  const fs::path mine = only_entry(dir), theirs = only_entry(other);
  ASSERT_NE(mine.filename(), theirs.filename());
  fs::copy_file(theirs, mine, fs::copy_options::overwrite_existing);
  const Child b = probe(dir);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("built for another key"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find(kExpected), std::string::npos) << b.output;
  EXPECT_EQ(counter(b.output, "compiler_runs"), 1) << b.output;
}

TEST_F(KernelCache, GroupOrOtherWritableEntryIsIgnored) {
  const fs::path dir = base_ / "cache";
  ASSERT_EQ(probe(dir).status, 0);
  const fs::path e = only_entry(dir);
  chmod(e.c_str(), 0666);
  const Child b = probe(dir);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("writable by group or others"), std::string::npos) << b.output;
  EXPECT_EQ(counter(b.output, "compiler_runs"), 1) << b.output;
  EXPECT_EQ(mode_of(e) & 022, 0u);  // replaced by a fresh private entry
}

// A shared object whose constructor creates `marker`, sealed as the entry of `legit`'s key: what a
// hostile user who can write the cache would plant.
std::string forged_entry(const fs::path& work, const fs::path& legit, const fs::path& marker) {
  const fs::path c = work / "evil.c", so = work / "evil.so";
  write_all(c,
            "#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void "
            "pwn(void) { close(open(\"" +
                marker.string() + "\", O_CREAT | O_WRONLY, 0644)); }\n");
  const char* sys_cc = access("/usr/bin/cc", X_OK) == 0 ? "/usr/bin/cc" : "/usr/bin/gcc";
  const Child r = run({sys_cc, "-shared", "-fPIC", "-o", so.string(), c.string()}, {});
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string bytes = read_all(legit);
  CacheKey key;
  key.name = legit.stem().string();
  const char* t = bytes.data() + bytes.size() - 56;
  for (int i = 7; i >= 0; --i) key.check = (key.check << 8) | static_cast<unsigned char>(t[32 + i]);
  const std::string evil = read_all(so);
  const std::string sealed = evil + ember::runtime::cache_entry_trailer(evil, key);
  // The forgery passes the content check: only ownership and permissions keep it out.
  EXPECT_FALSE(ember::runtime::check_cache_entry(sealed, key).has_value());
  return sealed;
}

TEST_F(KernelCache, AnotherUsersEntriesAreNeverLoaded) {
  if (!is_root()) GTEST_SKIP() << "needs root to act as a second user (nobody)";
  const fs::path marker = base_ / "CONSTRUCTOR_RAN";
  // 1. A cache directory owned by nobody: nobody fills it, then plants a forged entry.
  const fs::path shared = base_ / "nobody-cache";
  fs::create_directory(shared);
  ASSERT_EQ(chown(shared.c_str(), kNobody, kNobody), 0);
  const Child n = probe(shared, false, kNobody);
  ASSERT_EQ(n.status, 0) << n.output;
  const fs::path legit = only_entry(shared);
  write_all(legit, forged_entry(base_, legit, marker));
  ASSERT_EQ(chown(legit.c_str(), kNobody, kNobody), 0);
  const Child a = probe(shared);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("owned by uid 65534"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find(kExpected), std::string::npos) << a.output;
  EXPECT_FALSE(fs::exists(marker));
  // 2. My own private directory, but the entry in it belongs to nobody.
  const fs::path mine = base_ / "mine";
  ASSERT_EQ(probe(mine).status, 0);
  const fs::path my_entry = only_entry(mine);
  fs::copy_file(legit, my_entry, fs::copy_options::overwrite_existing);
  ASSERT_EQ(chown(my_entry.c_str(), kNobody, kNobody), 0);
  const Child b = probe(mine);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("not by you; never loaded"), std::string::npos) << b.output;
  EXPECT_FALSE(fs::exists(marker));
  // 3. A directory of mine that others may write (mode 0777): ignored as a whole.
  const fs::path open_dir = base_ / "open";
  ASSERT_EQ(probe(open_dir).status, 0);
  const fs::path open_entry = only_entry(open_dir);
  fs::copy_file(legit, open_entry, fs::copy_options::overwrite_existing);
  chmod(open_dir.c_str(), 0777);
  const Child c = probe(open_dir);
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find("writable by group or others"), std::string::npos) << c.output;
  EXPECT_FALSE(fs::exists(marker));
  // Control: the same forged entry, mine and private, IS loaded (its constructor runs), so the
  // checks above are what kept it out.
  chmod(open_dir.c_str(), 0700);
  ASSERT_EQ(chown(open_entry.c_str(), 0, 0), 0);
  chmod(open_entry.c_str(), 0600);
  probe(open_dir);
  EXPECT_TRUE(fs::exists(marker));
}

TEST_F(KernelCache, SymlinkedEntryIsNotFollowed) {
  const fs::path dir = base_ / "cache";
  ASSERT_EQ(probe(dir).status, 0);
  const fs::path e = only_entry(dir);
  const fs::path secret = base_ / "secret";
  write_all(secret, "root's data\n");
  chmod(secret.c_str(), 0600);
  fs::remove(e);
  fs::create_symlink(secret, e);
  const Child b = probe(dir);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find(kExpected), std::string::npos) << b.output;
  EXPECT_EQ(read_all(secret), "root's data\n");
  EXPECT_EQ(mode_of(secret), 0600u);
  EXPECT_FALSE(fs::is_symlink(e));  // replaced by a real entry
}

TEST_F(KernelCache, ReadOnlyCacheLeavesNoNewDirectoryPerRun) {
  if (!is_root()) GTEST_SKIP() << "needs root to run as nobody (root ignores a read-only mode)";
  const fs::path dir = base_ / "ro";
  fs::create_directory(dir);
  ASSERT_EQ(chown(dir.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(probe(dir, false, kNobody).status, 0);
  chmod(dir.c_str(), 0500);
  const auto before = entries(dir);
  for (int run = 0; run < 2; ++run) {
    const Child hit = probe(dir, false, kNobody);
    ASSERT_EQ(hit.status, 0) << hit.output;
    EXPECT_EQ(counter(hit.output, "disk_hits"), 1) << hit.output;
    const Child miss = probe(dir, true, kNobody);
    ASSERT_EQ(miss.status, 0) << miss.output;
    EXPECT_NE(miss.output.find(kExpectedAlt), std::string::npos) << miss.output;
    // The first run compiles into the per-user directory; the second finds it there.
    EXPECT_EQ(counter(miss.output, "compiler_runs"), run == 0 ? 1 : 0) << miss.output;
    EXPECT_EQ(entries(tmp_).size(), 1u);  // only $TMPDIR/ember-65534
  }
  EXPECT_EQ(entries(dir), before);
  EXPECT_EQ(mode_of(tmp_ / "ember-65534"), 0700u);
  EXPECT_EQ(entries(tmp_ / "ember-65534").size(), 1u);
}

TEST_F(KernelCache, NoHomeUsesAPerUserDirectoryAndRefusesASquattedOne) {
  const std::vector<std::string> unset = {"HOME", "XDG_CACHE_HOME", "EMBER_CACHE_DIR"};
  const fs::path mine = tmp_ / ("ember-" + std::to_string(geteuid()));
  const Child a = run({EMBER_PROBE_PATH}, {{"TMPDIR", tmp_.string()}}, unset);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(mode_of(mine), 0700u);
  EXPECT_EQ(entries(mine).size(), 1u);
  if (!is_root()) GTEST_SKIP() << "the squatting case needs root to act as nobody";
  fs::remove_all(mine);
  fs::create_directory(mine);  // squatted by another user before we ran
  ASSERT_EQ(chown(mine.c_str(), kNobody, kNobody), 0);
  const Child b = run({EMBER_PROBE_PATH}, {{"TMPDIR", tmp_.string()}}, unset);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("ignored: it is owned by uid 65534"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find(kExpected), std::string::npos) << b.output;
  EXPECT_TRUE(entries(mine).empty());
  EXPECT_EQ(entries(tmp_).size(), 1u);  // the private build directory was removed
  // A symlink there is refused too.
  fs::remove_all(mine);
  fs::create_directory(base_ / "elsewhere");
  fs::create_directory_symlink(base_ / "elsewhere", mine);
  const Child c = run({EMBER_PROBE_PATH}, {{"TMPDIR", tmp_.string()}}, unset);
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find("symbolic link"), std::string::npos) << c.output;
  EXPECT_TRUE(entries(base_ / "elsewhere").empty());
}

TEST_F(KernelCache, CacheDirectoryRemovedMidRunIsRecreated) {
  const fs::path dir = base_ / "cache";
  ember::support::settings().cache_dir = dir.string();
  using namespace ember;
  Tensor x = arange(32, TensorOptions(kFloat32));
  EXPECT_FLOAT_EQ((x * 7.0f + 2.0f).sum().item<float>(), 7.0f * 496 + 64);
  ASSERT_EQ(entries(dir).size(), 1u);
  fs::remove_all(dir);
  EXPECT_FLOAT_EQ((x * 9.0f - 1.0f).sum().item<float>(), 9.0f * 496 - 32);
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(entries(dir).size(), 1u);
  ember::support::settings().cache_dir.clear();
}

// Issue 17: a schedule's kernels are one batch, one cache entry; a large batch is compiled by up
// to thread-count processes at once and linked by one more, and the entry does not depend on it.
TEST_F(KernelCache, BatchIsOneEntryWhateverTheThreadCount) {
  const fs::path one = base_ / "one", two = base_ / "two";
  auto batch = [&](const fs::path& dir, const std::string& threads) {
    return run(
        {probe_.string(), "batch"},
        {{"EMBER_CACHE_DIR", dir.string()}, {"TMPDIR", tmp_.string()}, {"EMBER_THREADS", threads}});
  };
  const Child a = batch(one, "1");
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find(kExpectedBatch), std::string::npos) << a.output;
  EXPECT_EQ(counter(a.output, "compiler_runs"), 1) << a.output;  // ten kernels, one process
  EXPECT_EQ(counter(a.output, "kernels_from_compiler"), 10) << a.output;
  const Child b = batch(two, "2");
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find(kExpectedBatch), std::string::npos) << b.output;
  EXPECT_EQ(counter(b.output, "compiler_runs"), 3) << b.output;  // two compile jobs and the link
  EXPECT_EQ(counter(b.output, "kernels_from_compiler"), 10) << b.output;
  const fs::path e1 = only_entry(one), e2 = only_entry(two);
  EXPECT_EQ(e1.filename(), e2.filename());  // the key does not depend on the split
  EXPECT_EQ(mode_of(e2) & 022, 0u);
  // The entry built in two parts is a whole, sealed entry: another thread count loads it.
  const Child c = batch(two, "1");
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find(kExpectedBatch), std::string::npos) << c.output;
  EXPECT_EQ(counter(c.output, "compiler_runs"), 0) << c.output;
  EXPECT_EQ(counter(c.output, "kernels_from_disk_cache"), 10) << c.output;
  // A damaged batch entry is rebuilt, never run.
  std::string bytes = read_all(e2);
  bytes[bytes.size() / 2] ^= 0x10;
  write_all(e2, bytes);
  const Child d = batch(two, "2");
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_NE(d.output.find("checksum mismatch"), std::string::npos) << d.output;
  EXPECT_EQ(counter(d.output, "compiler_runs"), 3) << d.output;
  EXPECT_TRUE(entries(tmp_).empty());
}

TEST_F(KernelCache, ProcessesCompilingTheSameBatchAtOnceAllSucceed) {
  // Four processes with different thread counts build the same entries in one empty cache at the
  // same moment (a shell starts them; the test process does not fork while threaded).
  const fs::path dir = base_ / "cache";
  std::string script;
  for (int i = 0; i < 4; i++)
    script += "EMBER_THREADS=" + std::to_string(i % 2 + 1) + " '" + probe_.string() +
              "' batch > '" + (base_ / ("out" + std::to_string(i))).string() + "' 2>&1 & ";
  script += "wait";
  const Child sh = run({"/bin/sh", "-c", script},
                       {{"EMBER_CACHE_DIR", dir.string()}, {"TMPDIR", tmp_.string()}});
  ASSERT_EQ(sh.status, 0) << sh.output;
  for (int i = 0; i < 4; i++) {
    const std::string out = read_all(base_ / ("out" + std::to_string(i)));
    EXPECT_NE(out.find(kExpectedBatch), std::string::npos) << out;
    EXPECT_EQ(counter(out, "kernels_from_compiler") + counter(out, "kernels_from_disk_cache"), 10)
        << out;
    EXPECT_EQ(out.find("warning"), std::string::npos) << out;
  }
  // One entry (no build directory left behind), valid for every thread count.
  ASSERT_EQ(entries(dir).size(), 1u);
  for (const char* threads : {"1", "2", "3"}) {
    const Child c = run(
        {probe_.string(), "batch"},
        {{"EMBER_CACHE_DIR", dir.string()}, {"TMPDIR", tmp_.string()}, {"EMBER_THREADS", threads}});
    ASSERT_EQ(c.status, 0) << c.output;
    EXPECT_NE(c.output.find(kExpectedBatch), std::string::npos) << c.output;
    EXPECT_EQ(counter(c.output, "compiler_runs"), 0) << c.output;
  }
}

}  // namespace
