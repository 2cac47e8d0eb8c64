#include "engine/profiler.h"

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ember/context.h"
#include "ember/error.h"
#include "ember/support/atomic_file.h"
#include "ember/support/clock.h"
#include "ember/support/shape_str.h"
#include "engine/kernel_summary.h"

namespace ember {

namespace {

// A program's texts, kept once per program for the kernel table.
struct ProgramText {
  std::string ops, plan, source;
};

struct Store {
  std::mutex mu;
  std::vector<KernelEvent> kernels;
  std::vector<PhaseEvent> phases;
  std::map<uint64_t, ProgramText> programs;
};
Store& store() {
  static Store s;
  return s;
}

int thread_number() {
  static std::atomic<int> next{1};
  thread_local int id = next++;
  return id;
}

void json_string(std::ostream& o, const std::string& s) {
  o << '"';
  for (char c : s) {
    if (c == '"' || c == '\\')
      o << '\\' << c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o << buf;
    } else {
      o << c;
    }
  }
  o << '"';
}

// A matrix product: a SUM whose operand is a MUL of two factors that each broadcast (stride 0)
// along a different output axis, i.e. C[i,j] = sum_k A[i,k] * B[k,j] in any axis order.
bool broadcast_axes(const schedule::Expr& e, size_t n_out, std::set<size_t>& axes) {
  if (e.kind == schedule::Expr::Kind::Load) {
    bool any_strided = false;
    for (size_t d = 0; d < n_out && d < e.view.strides.size(); d++) {
      if (e.view.shape[d] > 1 && e.view.strides[d] == 0) axes.insert(d);
      if (e.view.strides[d] != 0) any_strided = true;
    }
    return any_strided;
  }
  bool loads = false;
  for (auto& s : e.src) loads |= broadcast_axes(*s, n_out, axes);
  return loads;
}

const schedule::Expr* find_sum(const schedule::Expr& e) {
  if (e.kind == schedule::Expr::Kind::Reduce) return e.op == ir::Op::SUM ? &e : nullptr;
  for (auto& s : e.src)
    if (const schedule::Expr* r = find_sum(*s)) return r;
  return nullptr;
}

}  // namespace

const char* kernel_family_name(KernelFamily f) {
  constexpr const char* kNames[] = {"forward and input-gradient products",
                                    "weight-gradient products", "everything else"};
  return kNames[static_cast<int>(f)];
}

ProfilePhase::ProfilePhase(const char* name) : name_(name) {
  if (Context::get().profile) start_ = engine::profile_now();
}
ProfilePhase::~ProfilePhase() {
  if (start_ < 0) return;
  PhaseEvent e{name_, start_, engine::profile_now(), thread_number()};
  std::lock_guard<std::mutex> l(store().mu);
  store().phases.push_back(std::move(e));
}

std::vector<KernelEvent> profiled_kernels() {
  std::lock_guard<std::mutex> l(store().mu);
  return store().kernels;
}
namespace engine {
size_t profiled_kernel_count() {
  std::lock_guard<std::mutex> l(store().mu);
  return store().kernels.size();
}
}  // namespace engine
std::vector<PhaseEvent> profiled_phases() {
  std::lock_guard<std::mutex> l(store().mu);
  return store().phases;
}
void clear_profile() {
  std::lock_guard<std::mutex> l(store().mu);
  store().kernels.clear();
  store().phases.clear();
  store().programs.clear();
}

std::vector<KernelTableRow> profiled_kernel_table() {
  std::vector<KernelEvent> ks;
  std::map<uint64_t, ProgramText> texts;
  {
    std::lock_guard<std::mutex> l(store().mu);
    ks = store().kernels;
    texts = store().programs;
  }
  std::map<uint64_t, KernelTableRow> rows;
  for (const KernelEvent& e : ks) {
    KernelTableRow& r = rows[e.program];
    if (r.launches++ == 0) {
      r.name = e.name;
      r.program = e.program;
      r.flops = e.flops;
      r.bytes = e.bytes;
      r.shape = e.shape;
      r.family = e.family;
      if (auto t = texts.find(e.program); t != texts.end()) {
        r.ops = t->second.ops;
        r.plan = t->second.plan;
        r.source = t->second.source;
      }
    }
    r.seconds += e.end_s - e.start_s;
  }
  std::vector<KernelTableRow> out;
  for (auto& [id, r] : rows) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const KernelTableRow& a, const KernelTableRow& b) {
    return a.seconds > b.seconds;
  });
  return out;
}

void write_kernel_table(const std::string& path) {
  nlohmann::json rows = nlohmann::json::array();
  double total = 0;
  for (const KernelTableRow& r : profiled_kernel_table()) {
    const double n = static_cast<double>(r.launches);
    char id[24];
    std::snprintf(id, sizeof id, "%llx", static_cast<unsigned long long>(r.program));
    rows.push_back({{"name", r.name},
                    {"program", id},
                    {"launches", r.launches},
                    {"seconds", r.seconds},
                    {"flops", r.flops},
                    {"bytes", r.bytes},
                    {"gflops", r.seconds > 0 ? r.flops * n / r.seconds * 1e-9 : 0.0},
                    {"gbs", r.seconds > 0 ? r.bytes * n / r.seconds * 1e-9 : 0.0},
                    {"shape", r.shape},
                    {"family", kernel_family_name(r.family)},
                    {"ops", r.ops},
                    {"plan", r.plan},
                    {"source", r.source}});
    total += r.seconds;
  }
  const nlohmann::json j = {{"kernels", rows}, {"seconds", total}};
  support::write_file_atomic(path, j.dump(1) + "\n",
                             "PROFILE: cannot write the kernel table to " + path + ": ");
}

std::string kernel_table_path(const std::string& trace_path) {
  const std::string ext = ".json";
  const bool has = trace_path.size() > ext.size() &&
                   trace_path.compare(trace_path.size() - ext.size(), ext.size(), ext) == 0;
  return (has ? trace_path.substr(0, trace_path.size() - ext.size()) : trace_path) +
         ".kernels.json";
}

void write_trace(const std::string& path) {
  std::vector<KernelEvent> ks = profiled_kernels();
  std::vector<PhaseEvent> ps = profiled_phases();
  const long pid = static_cast<long>(getpid());
  std::ostringstream o;
  o.precision(15);
  o << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  std::set<int> threads;
  auto begin = [&](const std::string& name, const char* cat, double s, double e, int tid) {
    o << (first ? "" : ",\n") << "{\"name\":";
    first = false;
    json_string(o, name);
    o << ",\"cat\":\"" << cat << "\",\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid
      << ",\"ts\":" << s * 1e6 << ",\"dur\":" << (e - s) * 1e6;
    threads.insert(tid);
  };
  for (auto& p : ps) {
    begin(p.name, "phase", p.start_s, p.end_s, p.thread);
    o << "}";
  }
  for (auto& k : ks) {
    begin(k.name, "kernel", k.start_s, k.end_s, k.thread);
    o << ",\"args\":{\"flops\":" << k.flops << ",\"bytes\":" << k.bytes << ",\"program\":\""
      << std::hex << k.program << std::dec << "\",\"family\":\"" << kernel_family_name(k.family)
      << "\",\"shape\":\"";
    o << support::dims_str(k.shape) << "\"}}";
  }
  for (int t : threads)
    o << (first ? "" : ",\n") << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid
      << ",\"tid\":" << t << ",\"args\":{\"name\":\"ember thread " << t << "\"}}";
  o << "\n]}\n";

  support::write_file_atomic(path, o.str(), "PROFILE: cannot write the trace to " + path + ": ");
}

KernelAttribution attribute_kernels(const std::vector<KernelEvent>& events) {
  KernelAttribution a;
  const KernelFamily order[] = {KernelFamily::Product, KernelFamily::WeightGradientProduct,
                                KernelFamily::Other};
  std::set<uint64_t> all;
  for (KernelFamily f : order) {
    FamilyShare s{f};
    std::set<uint64_t> progs;
    for (auto& e : events)
      if (e.family == f) {
        s.calls++;
        s.seconds += e.end_s - e.start_s;
        progs.insert(e.program);
        all.insert(e.program);
      }
    s.programs = static_cast<int64_t>(progs.size());
    a.calls += s.calls;
    a.seconds += s.seconds;
    a.families.push_back(s);
  }
  a.programs = static_cast<int64_t>(all.size());
  for (auto& s : a.families) s.share = a.seconds > 0 ? s.seconds / a.seconds : 0;
  return a;
}

namespace engine {

double profile_now() {
  static const double origin = support::now_seconds();
  return support::now_seconds() - origin;
}

KernelFamily classify_kernel(const schedule::Kernel& k) {
  const size_t rank = k.full_shape.size(), n_red = k.reduce_axes.size();
  if (n_red == 0 || !k.value || rank < n_red + 2) return KernelFamily::Other;
  const schedule::Expr* sum = find_sum(*k.value);
  if (!sum || sum->src.size() != 1) return KernelFamily::Other;
  const schedule::Expr& mul = *sum->src[0];
  if (mul.kind != schedule::Expr::Kind::Alu || mul.op != ir::Op::MUL || mul.src.size() != 2)
    return KernelFamily::Other;
  const size_t n_out = rank - n_red;
  std::set<size_t> a, b;
  if (!broadcast_axes(*mul.src[0], n_out, a) || !broadcast_axes(*mul.src[1], n_out, b))
    return KernelFamily::Other;
  bool distinct = false;
  for (size_t x : a)
    for (size_t y : b) distinct |= x != y;
  if (!distinct) return KernelFamily::Other;
  int64_t reduce = 1, widest_out = 1;
  for (int64_t ax : k.reduce_axes) reduce *= k.full_shape[ax];
  for (size_t d = 0; d < rank; d++)
    if (std::find(k.reduce_axes.begin(), k.reduce_axes.end(), int64_t(d)) == k.reduce_axes.end())
      widest_out = std::max(widest_out, k.full_shape[d]);
  // dW = x^T dy contracts the batch, which is longer than any weight dimension.
  return reduce > widest_out ? KernelFamily::WeightGradientProduct : KernelFamily::Product;
}

void record_kernel(const runtime::Program& p, double start_s, double end_s) {
  const schedule::Kernel& k = p.kernel;
  KernelEvent e;
  e.name = p.name;
  e.program = reinterpret_cast<uintptr_t>(&p);
  e.start_s = start_s;
  e.end_s = end_s;
  e.flops = k.flops();
  e.bytes = k.bytes();
  e.thread = thread_number();
  e.shape = k.full_shape;
  for (int64_t ax : k.reduce_axes) e.reduce_extent *= k.full_shape[ax];
  e.family = classify_kernel(k);
  std::lock_guard<std::mutex> l(store().mu);
  auto [text, first] = store().programs.try_emplace(e.program);
  if (first) text->second = {fused_ops(k), p.opts, p.source};
  store().kernels.push_back(std::move(e));
}

}  // namespace engine
}  // namespace ember
