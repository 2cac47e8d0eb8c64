// Matrix products, paired in one process: ember against oneDNN (dnnl_sgemm) and OpenBLAS
// (cblas_sgemm) on the study's shapes, float32, at one thread count. On a shared machine a ratio
// taken within one process, library after library in short alternating batches, is steadier than
// medians taken in separate processes (bench_matmul): a burst of load hits neighbours alike.
//
// Each round times, one after the other, a batch of each: ember's whole eager call (a fresh lazy
// matmul of two realized inputs, realized: schedule lookup, output buffer, launch), the same call
// through ember::jit (a replay: no graph, no plan lookup; how a loop of small products runs, as
// the rollout's actor does), ember's kernel alone (the compiled program the engine launched,
// called on the same buffers), oneDNN and OpenBLAS. A batch is a 150 ms pause (the previous
// library's spinning threads park), 10 warm-up calls (the study's protocol, docs/training.md: after
// the pause a microsecond call runs with cold caches and branch predictors for its first few calls)
// and `reps` timed ones; its median counts. The table gives each library's median over rounds and
// the median of the per-round ratios to oneDNN. "check" is the largest relative difference to
// oneDNN's result.
//
// One run covers one ISA level: $EMBER_ISA for ember; the caller holds oneDNN and OpenBLAS to the
// same level ($DNNL_MAX_CPU_ISA, $OPENBLAS_CORETYPE), as bench/run.sh does for bench_matmul.
// Usage: bench_matmul_paired [threads [rounds [reps [filter]]]]   (defaults 2, 9, 15; only the
// shapes whose name contains `filter`, e.g. "(4x128)"), or bench_matmul_paired --openblas-core.
#include <cblas.h>
#include <dnnl.h>
#include <ember/ember.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ember/support/clock.h"
#include "ember/support/settings.h"
#include "engine/realize.h"
#include "host_data.h"

namespace {

struct Case {
  const char* name;
  int64_t n, k, m;
  bool trans_a;  // left operand is the transposed view of a (k x n) buffer
  bool trans_b;  // right operand is the transposed view of an (m x k) buffer (nn::Linear's W^T)
};

const Case kCases[] = {
    {"(10000x128)@(128x128)", 10000, 128, 128, false, false},
    {"(10000x128)@(128x128) B=t()", 10000, 128, 128, false, true},
    {"(128x10000)@(10000x128) A=t()", 128, 10000, 128, true, false},
    {"(4x128)@(128x128)", 4, 128, 128, false, false},
    {"(4x128)@(128x128) B=t()", 4, 128, 128, false, true},
    {"(64x128)@(128x128) B=t()", 64, 128, 128, false, true},
    {"(10000x128)@(128x2) B=t()", 10000, 128, 2, false, true},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double batch_ms(int reps, const std::function<void()>& call) {
  // The previous library's idle threads may still spin (OpenBLAS's for up to ~0.1 s after a
  // call, OpenMP's for milliseconds): let them park first, or they take this batch's cores.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  for (int i = 0; i < 10; i++) call();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    double t0 = ember::support::now_seconds();
    call();
    t.push_back((ember::support::now_seconds() - t0) * 1e3);
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  // bench/run.sh asks which core OpenBLAS picks for this CPU without a hint: one it does not know
  // gets the generic "Prescott" kernels, and the script then names the level's core itself.
  if (argc > 1 && std::strcmp(argv[1], "--openblas-core") == 0) {
    std::printf("%s\n", openblas_get_corename());
    return 0;
  }
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  int reps = argc > 3 ? std::atoi(argv[3]) : 15;
  if (threads < 1 || rounds < 1 || reps < 1) {
    std::fprintf(stderr, "usage: %s [threads [rounds [reps [filter]]]]\n", argv[0]);
    return 2;
  }
  ember::set_num_threads(threads);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const std::string& isa = ember::support::settings().isa;
  const char* dn = std::getenv("DNNL_MAX_CPU_ISA");
  const char* ct = std::getenv("OPENBLAS_CORETYPE");
  std::ifstream la("/proc/loadavg");
  std::string load;
  std::getline(la, load);
  std::printf(
      "== ember EMBER_ISA=%s; oneDNN DNNL_MAX_CPU_ISA=%s; OpenBLAS core %s "
      "(OPENBLAS_CORETYPE=%s); %d threads; load average %s\n",
      !isa.empty() ? isa.c_str() : "unset (best)", dn ? dn : "unset", openblas_get_corename(),
      ct ? ct : "unset", threads, load.c_str());
  std::printf("%-31s %10s %10s %10s %10s %10s %8s %8s %8s %8s %8s %9s\n", "shape (float32)",
              "ember ms", "jit ms", "kernel ms", "oneDNN ms", "OpenBLAS", "GFLOPS", "e/oDNN",
              "j/oDNN", "k/oDNN", "e/OBLAS", "check");
  const std::string filter = argc > 4 ? argv[4] : "";
  for (const Case& c : kCases) {
    if (std::string(c.name).find(filter) == std::string::npos) continue;
    auto ad = host_data(c.n * c.k, 1), bd = host_data(c.k * c.m, 2);
    ember::Tensor a = c.trans_a ? ember::from_blob(ad.data(), {c.k, c.n}, ember::kFloat32).t()
                                : ember::from_blob(ad.data(), {c.n, c.k}, ember::kFloat32);
    ember::Tensor b = c.trans_b ? ember::from_blob(bd.data(), {c.m, c.k}, ember::kFloat32).t()
                                : ember::from_blob(bd.data(), {c.k, c.m}, ember::kFloat32);
    ember::realize({a, b});
    // The kernel alone: the program one realize launches, on the engine's own buffers.
    ember::engine::LaunchLog log;
    ember::Tensor out;
    {
      ember::engine::RecordLaunches record(log);
      out = a.matmul(b).realize();
    }
    const std::vector<ember::engine::Launch>& launches = log.launches;
    if (launches.size() != 1 || !launches[0].program) {
      std::fprintf(stderr, "%s: expected one kernel, got %zu launches\n", c.name, launches.size());
      return 1;
    }
    auto launch = launches[0];
    std::vector<void*> slots;
    for (auto& s : launch.buffers) slots.push_back(s->data());
    std::vector<float> cd(static_cast<size_t>(c.n * c.m)), cb(cd.size());
    int64_t lda = c.trans_a ? c.n : c.k, ldb = c.trans_b ? c.k : c.m;
    ember::Jit product = ember::jit([](const std::vector<ember::Tensor>& in) {
      return std::vector<ember::Tensor>{in[0].matmul(in[1])};
    });
    ember::Tensor out_jit;
    std::vector<double> t[5], r_e, r_j, r_k, r_b;
    for (int round = 0; round < rounds; round++) {
      double te = batch_ms(reps, [&] { out = a.matmul(b).realize(); });
      double tj = batch_ms(reps, [&] { out_jit = product({a, b})[0]; });
      double tk = batch_ms(reps, [&] { launch.program->launch(slots.data()); });
      double td = batch_ms(reps, [&] {
        dnnl_sgemm(c.trans_a ? 'T' : 'N', c.trans_b ? 'T' : 'N', c.n, c.m, c.k, 1.0f, ad.data(),
                   lda, bd.data(), ldb, 0.0f, cd.data(), c.m);
      });
      double tb = batch_ms(reps, [&] {
        cblas_sgemm(CblasRowMajor, c.trans_a ? CblasTrans : CblasNoTrans,
                    c.trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(c.n),
                    static_cast<int>(c.m), static_cast<int>(c.k), 1.0f, ad.data(),
                    static_cast<int>(lda), bd.data(), static_cast<int>(ldb), 0.0f, cb.data(),
                    static_cast<int>(c.m));
      });
      t[0].push_back(te), t[1].push_back(tk), t[2].push_back(td), t[3].push_back(tb);
      t[4].push_back(tj);
      r_e.push_back(te / td), r_j.push_back(tj / td), r_k.push_back(tk / td),
          r_b.push_back(te / tb);
    }
    if (product.replays() == 0) {
      std::fprintf(stderr, "%s: the jit never replayed\n", c.name);
      return 1;
    }
    double check = 0;
    for (const ember::Tensor& o : {out, out_jit}) {
      auto v = o.to_vector<float>();
      for (size_t i = 0; i < v.size(); i++)
        check = std::max(check, std::fabs(double(v[i]) - cd[i]) / (1 + std::fabs(double(cd[i]))));
    }
    double gflops = 2.0 * double(c.n * c.k * c.m) / (median(t[0]) * 1e-3) * 1e-9;
    std::printf(
        "%-31s %10.4f %10.4f %10.4f %10.4f %10.4f %8.1f %7.2fx %7.2fx %7.2fx %7.2fx %9.1e\n",
        c.name, median(t[0]), median(t[4]), median(t[1]), median(t[2]), median(t[3]), gflops,
        median(r_e), median(r_j), median(r_k), median(r_b), check);
  }
  return 0;
}
