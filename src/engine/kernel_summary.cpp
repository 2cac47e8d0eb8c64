#include "engine/kernel_summary.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ember::engine {

namespace {

struct Total {
  std::string name;
  int64_t launches = 0;
  double seconds = 0, flops = 0;
};

// The run's totals by program; printed when the process exits.
struct Totals {
  std::mutex mu;
  std::unordered_map<const runtime::Program*, Total> by_program;

  ~Totals() {
    std::vector<Total> rows;
    double all = 0;
    for (auto& [p, t] : by_program) {
      rows.push_back(t);
      all += t.seconds;
    }
    if (rows.empty() || all <= 0) return;
    std::sort(rows.begin(), rows.end(),
              [](const Total& a, const Total& b) { return a.seconds > b.seconds; });
    std::fprintf(stderr, "top kernels (%zu programs, %.1f ms of kernel time):\n", rows.size(),
                 all * 1e3);
    std::fprintf(stderr, "  %-28s %9s %11s %10s %7s %9s\n", "kernel", "launches", "total ms",
                 "mean us", "share", "GFLOPS");
    for (size_t i = 0; i < rows.size() && i < 10; i++) {
      const Total& t = rows[i];
      std::fprintf(stderr, "  %-28s %9lld %11.3f %10.1f %6.1f%% %9.2f\n", t.name.c_str(),
                   static_cast<long long>(t.launches), t.seconds * 1e3,
                   t.seconds / static_cast<double>(t.launches) * 1e6, 100 * t.seconds / all,
                   t.flops / t.seconds * 1e-9);
    }
  }
};
Totals& totals() {
  static Totals t;  // destroyed (and printed) at exit
  return t;
}

}  // namespace

std::string fused_ops(const schedule::Kernel& k) {
  std::string out;
  std::unordered_set<const schedule::Expr*> seen;
  std::function<void(const schedule::Expr&)> walk = [&](const schedule::Expr& e) {
    if (!seen.insert(&e).second) return;
    for (auto& s : e.src) walk(*s);  // sources first: evaluation order
    if (e.kind == schedule::Expr::Kind::Alu || e.kind == schedule::Expr::Kind::Reduce ||
        e.kind == schedule::Expr::Kind::Rand) {
      if (!out.empty()) out += ' ';
      out += e.kind == schedule::Expr::Kind::Rand ? "RAND" : ir::op_name(e.op);
    }
  };
  walk(*k.value);
  for (auto& o : k.more_outputs) walk(*o.value);
  return out;
}

void note_kernel_time(const runtime::Program& p, double seconds) {
  Totals& t = totals();
  std::lock_guard<std::mutex> l(t.mu);
  Total& row = t.by_program[&p];
  if (row.launches == 0) row.name = p.name;
  row.launches++;
  row.seconds += seconds;
  row.flops += p.kernel.flops();
}

}  // namespace ember::engine
