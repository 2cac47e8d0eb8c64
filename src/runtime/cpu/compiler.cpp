#include "runtime/cpu/compiler.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "ember/error.h"
#include "ember/support/settings.h"
#include "runtime/cpu/kernel_cache.h"
#include "runtime/cpu/target.h"
#include "runtime/process.h"

namespace ember::runtime {

namespace fs = std::filesystem;

namespace {

// The first line of a tool's output (run without a shell).
std::string first_line(const std::vector<std::string>& argv) {
  const ProcessResult r = run_process(argv, 4096, true);
  if (!r.ok()) return "";
  return r.output.substr(0, r.output.find('\n'));
}

// Splits a flag string on spaces into arguments (the flags hold no quoted arguments).
void append_words(std::vector<std::string>& argv, const std::string& words) {
  std::istringstream ss(words);
  std::string w;
  while (ss >> w) argv.push_back(w);
}

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string p = dir + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::mutex g_mu;
CompileCounters g_counters;  // guarded by g_mu
thread_local CompileCounters t_counters;

// Adds one compile_and_load's counts to the process's and this thread's counters.
void count(int64_t runs, int64_t batches, int64_t hits, int64_t compiled, int64_t from_disk) {
  auto add = [&](CompileCounters& c) {
    c.compiler_runs += runs;
    c.batches_compiled += batches;
    c.disk_hits += hits;
    c.kernels_compiled += compiled;
    c.kernels_from_disk += from_disk;
  };
  add(t_counters);
  std::lock_guard<std::mutex> lock(g_mu);
  add(g_counters);
}

}  // namespace

std::string cache_dir() {
  std::string d;
  if (const std::string& e = support::settings().cache_dir; !e.empty())
    d = e;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    d = std::string(x) + "/ember";
  else if (const char* h = std::getenv("HOME"); h && *h)
    d = std::string(h) + "/.cache/ember";
  else
    return per_user_tmp_dir();  // never a fixed directory shared by every user
  std::error_code ec;
  const fs::path abs = fs::absolute(d, ec);  // no argument of the compiler starts with '-'
  return ec ? d : abs.lexically_normal().string();
}

const CompilerInfo& compiler_info() {
  static CompilerInfo info = [] {
    CompilerInfo i;
    std::vector<std::string> candidates;
    if (const std::string& e = support::settings().cc; !e.empty())
      candidates = {e};
    else
      candidates = {"cc", "gcc", "clang"};
    for (auto& c : candidates) {
      i.path = find_in_path(c);
      if (!i.path.empty()) break;
    }
    if (i.path.empty()) return i;
    i.version = first_line({i.path, "--version"});
    // GCC: -O2 with -O3's vectoriser cost model and loop splitting. The other passes that only
    // -O3 adds (peeling, loop distribution, partial PRE, predictive commoning, ...) took a quarter
    // of the compile time of the training run's kernels (2.65 -> 2.01 CPU-s, GCC 12.2, AVX-512)
    // and changed neither their speed (the jitted PPO step's CPU time, 1 thread, within 1%) nor a
    // bit of a seeded training run. Loop splitting stays: without it the transposed product
    // (128x10000)@(10000x128) at sse2 ran at 1.44-1.49x oneDNN's time instead of 1.11-1.19x.
    // Other compilers (clang) keep -O3.
    // -fno-schedule-insns2: the scheduling after register allocation only reorders instructions
    // that an out-of-order x86 core reorders anyway; without it GCC executes 7.5% fewer
    // instructions on the training step's 38 kernels (17.7 -> 16.3 billion, cachegrind, GCC 12.2,
    // AVX-512), the same arithmetic instructions come out (a seeded training run is bit-identical)
    // and the products ran as fast (the (10000x128)@(128x128) kernel's median over 10 processes
    // 1.05x oneDNN's time against 1.03x, within this shared machine's noise).
    // -fno-unswitch-loops: GCC 12.2 at -O3 -march=native (AVX-512) miscompiles an unswitched,
    // vectorised masked uint8 -> int64 sum (tests/codegen fuzz seed 200441); -O2 does not
    // unswitch, and the flag keeps it so should the level change.
    // -fno-trapping-math: GCC sinks an operation used by one arm of a select into that arm, and
    // then if-conversion may not execute it unconditionally if it could raise an FP exception,
    // so the loop keeps its branches and stays scalar; AVX-512 escapes that with masked
    // operations, AVX2 and SSE2 do not. The PPO ratio's gradient (E_10000: expf and selects) ran
    // 108 -> 20 us at AVX2 and 103 -> 45 us at SSE2, its clipped loss (r_10000) 76 -> 13 us.
    // Kernels never read the FP exception flags; the flag changes no operation's result, only
    // which operations may run speculatively. A loop that now vectorises calls libmvec's vector
    // expf (within 4 ulp) where glibc's scalar one ran, so its values can move by a few ulp.
    // --param=avoid-fma-max-bits=0: with -mtune for AMD Zen 2-4 (and some others), GCC leaves a
    // multiply-add whose sum feeds the next iteration's (a single accumulator chain) as a multiply
    // and an add, a rounding more than the fused form, but contracts the same sum where a loop
    // keeps several chains. Then a matrix-vector product's rows rounded differently one at a
    // time than in fours (10,001 against 10,000 rows on Zen 3: tests/codegen/test_step_kernels),
    // and the same kernel differently on AMD and Intel CPUs at one ISA level. Off, every such sum
    // is fused wherever the level has FMA, whatever the CPU tuned for.
    // The ISA level's -march flags (runtime/cpu/target.h; $EMBER_ISA forces a lower level).
    const bool gcc = i.version.find("clang") == std::string::npos;
    i.flags = std::string(gcc ? "-O2 -fvect-cost-model=dynamic -fsplit-loops -fno-schedule-insns2 "
                                "--param=avoid-fma-max-bits=0 "
                              : "-O3 ") +
              target_flags(host_target()) +
              " -fPIC -shared -fno-math-errno -fno-trapping-math -fno-unswitch-loops -std=gnu11 -w";
    // glibc's vector math library: with it, loops over exp/log/sin/tanh/pow vectorise (the
    // kernel prelude declares the SIMD variants when EMBER_HAVE_MVEC is defined).
    i.libs = " -lm";
    std::string mvec = first_line({i.path, "-print-file-name=libmvec.so"});
    if (mvec.find('/') != std::string::npos) {
      i.flags += " -DEMBER_HAVE_MVEC";
      i.libs += " -lmvec";
    }
    i.cpu = cpu_model();
    return i;
  }();
  if (info.path.empty()) {
    // A compiler named by EMBER_CC is the one missing: name it, not the search it replaced.
    if (const std::string& e = support::settings().cc; !e.empty())
      throw CompileError(
          "EMBER_CC=" + e + ": no such C compiler (" +
          (e.find('/') != std::string::npos ? "not an executable file" : "not found on PATH") +
          "); set EMBER_CC to a C compiler, or unset it to use cc, gcc or clang "
          "from PATH");
    throw CompileError(
        "no C compiler found (tried cc, gcc, clang on PATH); install gcc or clang, or set "
        "EMBER_CC");
  }
  return info;
}

namespace {

// The directories an entry may be loaded from, and the one new entries go to ("" when none).
struct CacheDirs {
  std::vector<std::string> lookup;
  std::string publish;
};

CacheDirs resolve_cache_dirs() {
  CacheDirs d;
  const std::string primary = cache_dir();
  const bool shared_place = primary == per_user_tmp_dir();
  if (auto why = ensure_private_dir(primary, shared_place)) {
    cache_warning("kernel cache directory '" + primary + "' ignored: " + *why);
  } else {
    d.lookup.push_back(primary);
    if (dir_writable(primary)) d.publish = primary;
  }
  if (d.publish.empty() && !shared_place) {
    // A read-only or untrusted cache: new entries go to the per-user directory, so that a run
    // does not leave a new temporary directory behind.
    const std::string fallback = per_user_tmp_dir();
    if (auto why = ensure_private_dir(fallback, true)) {
      cache_warning("kernel cache fallback directory '" + fallback + "' ignored: " + *why);
    } else {
      d.lookup.push_back(fallback);
      if (dir_writable(fallback)) d.publish = fallback;
    }
  }
  return d;
}

// Removes a private build directory and what the compiler left in it.
struct BuildDir {
  std::string path;
  ~BuildDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

void write_new_file(const std::string& path, const std::string& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw CompileError("cannot create '" + path + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      close(fd);
      throw CompileError("cannot write '" + path + "': " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0)
    throw CompileError("cannot write '" + path + "': " + std::strerror(errno));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f) throw CompileError("cannot read compiled object '" + path + "'");
  return ss.str();
}

}  // namespace

namespace {

// Splits kernels [0, n) into `parts` groups of about equal source size (largest first, each to
// the lightest group); each group keeps the kernels' order.
std::vector<std::vector<size_t>> balance(const std::vector<std::string>& kernels, int parts) {
  std::vector<size_t> order(kernels.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return kernels[a].size() > kernels[b].size(); });
  std::vector<std::vector<size_t>> groups(static_cast<size_t>(parts));
  std::vector<size_t> load(groups.size(), 0);
  for (size_t i : order) {
    const size_t g = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    groups[g].push_back(i);
    load[g] += kernels[i].size();
  }
  for (auto& g : groups) std::sort(g.begin(), g.end());
  return groups;
}

void check_run(const ProcessResult& r, const std::vector<std::string>& argv) {
  if (!r.ok())
    throw CompileError("kernel compilation failed (" + display_command(argv) + ", status " +
                       std::to_string(r.status) + "):\n" + r.output.substr(0, 4000));
}

// Builds `obj` (a shared object) from the batch in build directory `dir`; returns the number of
// compiler processes run.
int build_object(const CompilerInfo& cc, const std::string& dir, const std::string& obj,
                 const std::string& prelude, const std::vector<std::string>& kernels, int jobs) {
  size_t source = 0;
  for (const auto& k : kernels) source += k.size();
  const int n = static_cast<int>(kernels.size());
  const int parts = static_cast<int>(
      std::max<size_t>(1, std::min({static_cast<size_t>(std::max(jobs, 1)), static_cast<size_t>(n),
                                    source / kMinSourcePerJob})));
  if (parts == 1) {
    std::string tu = prelude;
    for (const auto& k : kernels) tu += "\n" + k;
    const std::string src = dir + "/kernel.c";
    write_new_file(src, tu);
    std::vector<std::string> argv = {cc.path};
    append_words(argv, cc.flags);
    argv.insert(argv.end(), {"-o", obj, src});
    append_words(argv, cc.libs);
    check_run(run_process(argv), argv);
    return 1;
  }
  // Compile the parts to object files at once (same flags: -shared is inert with -c), then link.
  const auto groups = balance(kernels, parts);
  std::vector<std::vector<std::string>> argvs;
  std::vector<std::string> objects;
  for (size_t g = 0; g < groups.size(); g++) {
    std::string tu = prelude;
    for (size_t i : groups[g]) tu += "\n" + kernels[i];
    const std::string src = dir + "/part" + std::to_string(g) + ".c";
    objects.push_back(dir + "/part" + std::to_string(g) + ".o");
    write_new_file(src, tu);
    std::vector<std::string> argv = {cc.path};
    append_words(argv, cc.flags);
    argv.insert(argv.end(), {"-c", "-o", objects.back(), src});
    argvs.push_back(std::move(argv));
  }
  std::vector<ProcessResult> results(argvs.size());
  {
    std::vector<std::thread> threads;
    for (size_t g = 1; g < argvs.size(); g++)
      threads.emplace_back([&, g] {
        try {
          results[g] = run_process(argvs[g]);
        } catch (const std::exception& e) {  // std::bad_alloc only
          results[g].status = -1;
          results[g].output = e.what();
        }
      });
    results[0] = run_process(argvs[0]);
    for (auto& t : threads) t.join();
  }
  for (size_t g = 0; g < argvs.size(); g++) check_run(results[g], argvs[g]);
  std::vector<std::string> link = {cc.path};
  append_words(link, cc.flags);
  link.insert(link.end(), {"-o", obj});
  link.insert(link.end(), objects.begin(), objects.end());
  append_words(link, cc.libs);
  check_run(run_process(link), link);
  return parts + 1;
}

}  // namespace

void* compile_and_load(const std::string& source, bool* cache_hit) {
  return compile_and_load(source, {}, 1, cache_hit);
}

void* compile_and_load(const std::string& prelude, const std::vector<std::string>& kernels,
                       int jobs, bool* cache_hit) {
  const CompilerInfo& cc = compiler_info();
  std::string material = prelude;
  for (const auto& k : kernels) material += "\n" + k;
  material += "\n" + cc.path + "\n" + cc.version + "\n" + cc.flags + cc.libs + "\n" + cc.cpu +
              "\n" + host_target().str();
  const CacheKey key = make_cache_key(material);
  const int64_t n_kernels = static_cast<int64_t>(kernels.size());
  // No lock is held while compiling: threads compile different batches at once (a batch compiled
  // ahead on a background thread, engine/programs.h CompileOnly, while the caller's thread
  // compiles its own). Two threads building the same entry each build their own, as two
  // processes do. Resolved on every compilation: a cache directory removed mid-run is recreated.
  const CacheDirs dirs = resolve_cache_dirs();
  for (const std::string& d : dirs.lookup)
    if (void* h = load_cache_entry(d, key)) {
      count(0, 0, 1, 0, n_kernels);
      if (cache_hit) *cache_hit = true;
      return h;
    }
  if (cache_hit) *cache_hit = false;

  // Build in a fresh private directory (mkdtemp: 0700, unpredictable name) inside the directory
  // the entry is published to, so that the final rename stays on one file system. Two processes
  // building the same entry at once each build their own and the later rename wins: both are
  // whole, valid entries for the key.
  const char* t = std::getenv("TMPDIR");
  const std::string parent = !dirs.publish.empty() ? dirs.publish : (t && *t ? t : "/tmp");
  std::string templ = parent + "/.ember-build-XXXXXX";
  if (!mkdtemp(templ.data()))
    throw CompileError("cannot create a build directory in '" + parent +
                       "': " + std::strerror(errno));
  BuildDir build{templ};
  const std::string obj = build.path + "/kernel.so";
  count(build_object(cc, build.path, obj, prelude, kernels, jobs), 1, 0, n_kernels, 0);

  // Seal the object with its key and checksum, then publish it atomically.
  std::string bytes = read_file(obj);
  bytes += cache_entry_trailer(bytes, key);
  const std::string sealed = build.path + "/entry.so";
  write_new_file(sealed, bytes);
  std::string so = sealed;
  if (!dirs.publish.empty()) {
    const std::string dest = dirs.publish + "/" + key.name + ".so";
    if (std::rename(sealed.c_str(), dest.c_str()) == 0)
      so = dest;
    else
      cache_warning("cannot publish kernel cache entry '" + dest + "': " + std::strerror(errno));
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw CompileError(std::string("cannot load compiled kernels: ") + dlerror());
  return h;  // an unpublished object stays mapped after its build directory is removed
}

CompileCounters compile_counters() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_counters;
}

CompileCounters compile_counters_this_thread() { return t_counters; }

void* load_symbol(void* handle, const std::string& name) {
  void* s = dlsym(handle, name.c_str());
  if (!s) throw CompileError("compiled object lacks symbol " + name);
  return s;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace ember::runtime
