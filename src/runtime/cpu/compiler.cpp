#include "runtime/cpu/compiler.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "ember/error.h"
#include "runtime/cpu/target.h"

namespace ember::runtime {

namespace fs = std::filesystem;

namespace {

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  pclose(p);
  return out;
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

// FNV-1a 64-bit, printed as hex: stable across runs and builds (std::hash is not).
std::string content_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool writable_dir(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p, ec);
  return fs::is_directory(p, ec) && access(p.c_str(), W_OK) == 0;
}

std::mutex g_mu;

}  // namespace

std::string cache_dir() {
  if (const char* e = std::getenv("EMBER_CACHE_DIR"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ember";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/ember";
  return "/tmp/ember-cache";
}

const CompilerInfo& compiler_info() {
  static CompilerInfo info = [] {
    CompilerInfo i;
    std::vector<std::string> candidates;
    if (const char* e = std::getenv("EMBER_CC"); e && *e)
      candidates = {e};
    else
      candidates = {"cc", "gcc", "clang"};
    for (auto& c : candidates) {
      i.path = find_in_path(c);
      if (!i.path.empty()) break;
    }
    if (i.path.empty()) return i;
    std::string v = run_capture("'" + i.path + "' --version 2>/dev/null");
    i.version = v.substr(0, v.find('\n'));
    // -fno-unswitch-loops: GCC 12.2 at -O3 -march=native (AVX-512) miscompiles an unswitched,
    // vectorised masked uint8 -> int64 sum (tests/codegen fuzz seed 200441); typical kernels
    // compile to the same code without it.
    // The ISA level's -march flags (runtime/cpu/target.h; $EMBER_ISA forces a lower level).
    i.flags = "-O3 " + target_flags(host_target()) +
              " -fPIC -shared -fno-math-errno -fno-unswitch-loops -std=gnu11 -w";
    // glibc's vector math library: with it, loops over exp/log/sin/tanh/pow vectorise (the
    // kernel prelude declares the SIMD variants when EMBER_HAVE_MVEC is defined).
    i.libs = " -lm";
    std::string mvec = run_capture("'" + i.path + "' -print-file-name=libmvec.so 2>/dev/null");
    if (mvec.find('/') != std::string::npos) {
      i.flags += " -DEMBER_HAVE_MVEC";
      i.libs += " -lmvec";
    }
    i.cpu = cpu_model();
    return i;
  }();
  if (info.path.empty())
    throw CompileError(
        "ember: no C compiler found (tried $EMBER_CC, cc, gcc, clang on PATH); install gcc or "
        "clang, or set EMBER_CC");
  return info;
}

void* compile_and_load(const std::string& source, bool* cache_hit) {
  const CompilerInfo& cc = compiler_info();
  std::string key = content_hash(source + "\n" + cc.path + "\n" + cc.version + "\n" + cc.flags +
                                 cc.libs + "\n" + cc.cpu + "\n" + host_target().str());
  std::lock_guard<std::mutex> lock(g_mu);
  fs::path dir = cache_dir();
  if (!writable_dir(dir) && !fs::exists(dir / (key + ".so"))) {
    static fs::path tmp = [] {
      char templ[] = "/tmp/ember-cache-XXXXXX";
      char* d = mkdtemp(templ);
      return fs::path(d ? d : "/tmp");
    }();
    dir = tmp;
  }
  fs::path so = dir / (key + ".so");
  if (fs::exists(so)) {
    if (void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (cache_hit) *cache_hit = true;
      return h;
    }
    // Corrupt or foreign entry: rebuild it below (in a writable place).
    if (!writable_dir(so.parent_path()) || access(so.c_str(), W_OK) != 0) {
      static fs::path tmp2 = [] {
        char templ[] = "/tmp/ember-cache-XXXXXX";
        char* d = mkdtemp(templ);
        return fs::path(d ? d : "/tmp");
      }();
      so = tmp2 / (key + ".so");
    }
  }
  if (cache_hit) *cache_hit = false;
  std::string stem = so.string() + ".tmp." + std::to_string(getpid());
  std::string src = stem + ".c", obj = stem + ".so", log = stem + ".log";
  {
    std::ofstream f(src);
    f << source;
    if (!f) throw CompileError("ember: cannot write kernel source to " + src);
  }
  std::string cmd = "'" + cc.path + "' " + cc.flags + " -o '" + obj + "' '" + src + "'" + cc.libs +
                    " > '" + log + "' 2>&1";
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream lf(log);
    std::stringstream msg;
    msg << lf.rdbuf();
    fs::remove(src);
    fs::remove(log);
    throw CompileError("ember: kernel compilation failed (" + cmd + "):\n" +
                       msg.str().substr(0, 4000));
  }
  fs::remove(src);
  fs::remove(log);
  std::error_code ec;
  fs::rename(obj, so, ec);  // atomic publish: readers see a whole object or none
  if (ec) so = obj;
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw CompileError(std::string("ember: cannot load compiled kernels: ") + dlerror());
  return h;
}

void* load_symbol(void* handle, const std::string& name) {
  void* s = dlsym(handle, name.c_str());
  if (!s) throw CompileError("ember: compiled object lacks symbol " + name);
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
