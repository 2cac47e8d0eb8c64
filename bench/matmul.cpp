// Matrix-product benchmark: ember's generated matmul against oneDNN (dnnl_sgemm) and OpenBLAS
// (cblas_sgemm), float32, with 1 and 2 threads, on the training step's shapes: a hidden layer over
// a whole epoch, its weight gradient, and the batch-4 actor.
//
// Every (library, thread count) runs in its own forked process (so one library's spinning worker
// threads cannot slow the next), 10 warm-up calls then 30 timed calls (300 for the small shape);
// the table gives the median of the best of `rounds` interleaved rounds. ember's time is a whole
// `realize()` of a fresh lazy matmul of two realized inputs (schedule lookup, output allocation,
// launch); "kernel ms" is the launch alone (the engine's DEBUG=2 timer). "cpu ms" is the process
// CPU time per call (all threads, including any spin-waiting): on a shared machine it shows the
// work done when wall time shows the queue. "check" is the relative difference of the result's sum
// to oneDNN's.
//
// One run covers one ISA level: $EMBER_ISA for ember (default: the CPU's best), with oneDNN and
// OpenBLAS held to the same level by the caller ($DNNL_MAX_CPU_ISA, $OPENBLAS_CORETYPE: OpenBLAS
// reads it when it is loaded). "% peak" is the GFLOPS over the level's measured peak at the same
// thread count (peak.h). bench/run.sh runs every level the machine has.
// Usage: bench_matmul [reps-scale [rounds]]   (defaults 1 and 3; e.g. 0.2 1 for a quick run)
#include <cblas.h>
#include <dnnl.h>
#include <ember/ember.h>
#include <fcntl.h>
#include <omp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "ember/build_info.h"
#include "ember/support/clock.h"
#include "host_data.h"
#include "peak.h"

namespace {

struct Case {
  const char* name;
  int64_t n, k, m;
  bool trans_a;  // left operand is the transposed view of a (k x n) buffer
  int reps;
};

const Case kCases[] = {
    {"(10000x128)@(128x128)", 10000, 128, 128, false, 30},
    {"(128x10000)@(10000x128) A=t()", 128, 10000, 128, true, 30},
    {"(4x128)@(128x128)", 4, 128, 128, false, 300},
};

enum Lib { kEmber, kOneDnn, kOpenBlas };
const char* kLibNames[] = {"ember", "oneDNN", "OpenBLAS"};

struct Result {
  double ms = 0, cpu_ms = 0, kernel_ms = 0, checksum = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double sum(const float* p, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += p[i];
  return s;
}

double process_cpu() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Times `call` (warm-up, then reps timed calls); sets the medians of wall and process CPU time.
void time_median(int reps, const std::function<void()>& call, Result& r) {
  for (int i = 0; i < 10; i++) call();
  std::vector<double> t, c;
  for (int i = 0; i < reps; i++) {
    double t0 = ember::support::now_seconds(), c0 = process_cpu();
    call();
    t.push_back((ember::support::now_seconds() - t0) * 1e3);
    c.push_back((process_cpu() - c0) * 1e3);
  }
  r.ms = median(t);
  r.cpu_ms = median(c);
}

Result run_ember(const Case& c, int threads, int reps) {
  ember::set_num_threads(threads);
  auto ad = host_data(c.n * c.k, 1), bd = host_data(c.k * c.m, 2);
  ember::Tensor a = c.trans_a ? ember::from_blob(ad.data(), {c.k, c.n}, ember::kFloat32).t()
                              : ember::from_blob(ad.data(), {c.n, c.k}, ember::kFloat32);
  ember::Tensor b = ember::from_blob(bd.data(), {c.k, c.m}, ember::kFloat32);
  ember::realize({a, b});
  ember::Tensor out;
  Result r;
  time_median(
      reps, [&] { out = a.matmul(b).realize(); }, r);
  // Kernel-only time: the engine's DEBUG=2 per-launch timer, with its lines sent to /dev/null.
  int saved = dup(2), null = open("/dev/null", O_WRONLY);
  dup2(null, 2);
  ember::Context::get().debug = 2;
  std::vector<double> kt;
  for (int i = 0; i < std::min(reps, 30); i++) {
    double before = ember::runtime_stats().kernel_seconds;
    out = a.matmul(b).realize();
    kt.push_back((ember::runtime_stats().kernel_seconds - before) * 1e3);
  }
  ember::Context::get().debug = 0;
  dup2(saved, 2);
  close(null);
  close(saved);
  r.kernel_ms = median(kt);
  auto v = out.to_vector<float>();
  r.checksum = sum(v.data(), static_cast<int64_t>(v.size()));
  return r;
}

Result run_blas(Lib lib, const Case& c, int threads, int reps) {
  auto ad = host_data(c.n * c.k, 1), bd = host_data(c.k * c.m, 2);
  std::vector<float> cd(static_cast<size_t>(c.n * c.m));
  // Row-major C[n,m] = op(A) B; op(A) = A^T with A stored (k x n) when trans_a.
  int64_t lda = c.trans_a ? c.n : c.k;
  std::function<void()> call;
  if (lib == kOneDnn) {
    omp_set_num_threads(threads);
    call = [&] {
      dnnl_sgemm(c.trans_a ? 'T' : 'N', 'N', c.n, c.m, c.k, 1.0f, ad.data(), lda, bd.data(), c.m,
                 0.0f, cd.data(), c.m);
    };
  } else {
    openblas_set_num_threads(threads);
    call = [&] {
      cblas_sgemm(CblasRowMajor, c.trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans,
                  static_cast<int>(c.n), static_cast<int>(c.m), static_cast<int>(c.k), 1.0f,
                  ad.data(), static_cast<int>(lda), bd.data(), static_cast<int>(c.m), 0.0f,
                  cd.data(), static_cast<int>(c.m));
    };
  }
  Result r;
  time_median(reps, call, r);
  r.checksum = sum(cd.data(), c.n * c.m);
  return r;
}

// Runs one (library, threads) job over every case in a child process.
std::vector<Result> run_forked(Lib lib, int threads, double scale) {
  int fd[2];
  if (pipe(fd) != 0) std::exit(1);
  pid_t pid = fork();
  std::vector<Result> rs(std::size(kCases));
  if (pid == 0) {
    close(fd[0]);
    for (size_t i = 0; i < std::size(kCases); i++) {
      int reps = std::max(5, static_cast<int>(kCases[i].reps * scale));
      rs[i] = lib == kEmber ? run_ember(kCases[i], threads, reps)
                            : run_blas(lib, kCases[i], threads, reps);
    }
    ssize_t w = write(fd[1], rs.data(), rs.size() * sizeof(Result));
    _exit(w == static_cast<ssize_t>(rs.size() * sizeof(Result)) ? 0 : 1);
  }
  close(fd[1]);
  size_t want = rs.size() * sizeof(Result), got = 0;
  while (got < want) {
    ssize_t n = read(fd[0], reinterpret_cast<char*>(rs.data()) + got, want - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got < want) std::fprintf(stderr, "%s with %d threads failed\n", kLibNames[lib], threads);
  return rs;
}

}  // namespace

int main(int argc, char** argv) {
  double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const char* ct = std::getenv("OPENBLAS_CORETYPE");
  const char* dn = std::getenv("DNNL_MAX_CPU_ISA");
  std::string level = ember::build_info().isa;  // $EMBER_ISA, else the best the CPU has
  std::printf(
      "== ISA level %s: ember EMBER_ISA=%s; oneDNN %d.%d DNNL_MAX_CPU_ISA=%s; OpenBLAS core %s "
      "(OPENBLAS_CORETYPE=%s)\n",
      level.c_str(), level.c_str(), dnnl_version()->major, dnnl_version()->minor, dn ? dn : "unset",
      openblas_get_corename(), ct ? ct : "unset");
  double peak[3] = {0, ember::bench::measured_peak_gflops(level, 1),
                    ember::bench::measured_peak_gflops(level, 2)};
  std::printf("measured peak of %s: %.1f GFLOPS on 1 thread, %.1f on 2\n", level.c_str(), peak[1],
              peak[2]);
  std::ifstream la("/proc/loadavg");
  std::string load;
  std::getline(la, load);
  std::printf("load average: %s (medians are wall-clock; cpu ms = process CPU time per call)\n",
              load.c_str());
  std::printf("%-32s %-9s %3s %10s %10s %10s %9s %7s %10s %9s\n", "shape (float32)", "library",
              "thr", "median ms", "cpu ms", "kernel ms", "GFLOPS", "% peak", "ember/oDNN", "check");
  for (int threads : {1, 2}) {
    // Rounds interleave the libraries; each keeps its best (lowest-median) round, so a burst of
    // load from other processes during one library's turn does not decide the ratio.
    std::vector<std::vector<Result>> res(3);
    for (int round = 0; round < rounds; round++)
      for (Lib lib : {kEmber, kOneDnn, kOpenBlas}) {
        auto r = run_forked(lib, threads, scale);
        if (res[lib].empty()) res[lib] = r;
        for (size_t i = 0; i < r.size(); i++)
          if (r[i].ms < res[lib][i].ms) res[lib][i] = r[i];
      }
    for (size_t i = 0; i < std::size(kCases); i++) {
      const Case& c = kCases[i];
      double flop = 2.0 * static_cast<double>(c.n * c.k * c.m);
      const Result& ref = res[kOneDnn][i];
      for (Lib lib : {kEmber, kOneDnn, kOpenBlas}) {
        const Result& r = res[lib][i];
        char kern[32] = "", ratio[32] = "";
        if (lib == kEmber) {
          std::snprintf(kern, sizeof kern, "%.4f", r.kernel_ms);
          std::snprintf(ratio, sizeof ratio, "%.2fx", r.ms / ref.ms);
        }
        double check =
            std::fabs(r.checksum - ref.checksum) / std::max(1.0, std::fabs(ref.checksum));
        double gflops = flop / (r.ms * 1e-3) * 1e-9;
        std::printf("%-32s %-9s %3d %10.4f %10.4f %10s %9.1f %6.0f%% %10s %9.1e\n", c.name,
                    kLibNames[lib], threads, r.ms, r.cpu_ms, kern, gflops,
                    100 * gflops / peak[threads], ratio, check);
      }
    }
  }
  return 0;
}
