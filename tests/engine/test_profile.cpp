// PROFILE=1 trace, GRAPH=1 Graphviz files and the kernel attribution (include/ember/profile.h), on
// a small captured optimizer step.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "ember/ember.h"
#include "ember/op_attribution.h"
#include "ember/support/read_file.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) { return support::read_file(p.string()); }

fs::path temp_dir(const std::string& name) {
  fs::path d =
      fs::temp_directory_path() / ("ember-profile-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

nn::Sequential mlp(int64_t in, int64_t hidden, int64_t out) {
  nn::Sequential s;
  s->push_back(nn::Linear(in, hidden));
  s->push_back(nn::Tanh());
  s->push_back(nn::Linear(hidden, hidden));
  s->push_back(nn::Tanh());
  s->push_back(nn::Linear(hidden, out));
  return s;
}

// A small PPO-shaped step: MLP forward, loss, backward, grad clipping, Adam; batch 64 > widths.
struct Step {
  nn::Sequential net = mlp(8, 32, 2);
  optim::Adam opt{net->parameters(), optim::AdamOptions(1e-3)};
  Tensor x = randn({64, 8}), y = randn({64, 2});
  std::vector<Tensor> operator()(const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = (net->forward(in[0]) - in[1]).square().mean();
    loss.backward();
    nn::utils::clip_grad_norm_(net->parameters(), 0.5);
    opt.step();
    return {loss.detach()};
  }
};

struct ProfileOn {
  ProfileOn() {
    Context::get().profile = true;
    clear_profile();
  }
  ~ProfileOn() {
    Context::get().profile = false;
    clear_profile();
  }
};

}  // namespace

TEST(Profile, TraceHasEveryKernelOfACapturedStepAndThePhases) {
  manual_seed(1);
  Step step;
  realize({step.x, step.y});
  Jit j([&](const std::vector<Tensor>& in) { return step(in); });
  j({step.x, step.y});  // capture
  ProfileOn on;
  const int64_t before = runtime_stats().kernels_launched;
  {
    ProfilePhase phase("replay");
    j({step.x, step.y})[0].item<float>();
  }
  const int64_t launched = runtime_stats().kernels_launched - before;
  ASSERT_GT(launched, 10);
  auto kernels = profiled_kernels();
  ASSERT_EQ(static_cast<int64_t>(kernels.size()), launched);

  const fs::path dir = temp_dir("trace");
  const fs::path path = dir / "trace.json";
  write_trace(path.string());
  const nlohmann::json t = nlohmann::json::parse(slurp(path));  // throws on invalid JSON
  std::multiset<std::string> traced, recorded;
  int phases = 0;
  for (auto& e : t.at("traceEvents")) {
    if (e.at("ph") == "M") continue;
    EXPECT_EQ(e.at("ph"), "X");
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
    EXPECT_TRUE(e.contains("ts") && e.contains("pid") && e.contains("tid"));
    if (e.at("cat") == "kernel") {
      traced.insert(e.at("name").get<std::string>());
      EXPECT_TRUE(e.at("args").contains("flops") && e.at("args").contains("bytes"));
    } else if (e.at("cat") == "phase" && e.at("name") == "replay") {
      phases++;
    }
  }
  for (auto& k : kernels) recorded.insert(k.name);
  EXPECT_EQ(traced, recorded);
  EXPECT_EQ(phases, 1);
  // The phase spans its kernels.
  auto ph = profiled_phases();
  ASSERT_EQ(ph.size(), 1u);
  for (auto& k : kernels) {
    EXPECT_GE(k.start_s, ph[0].start_s);
    EXPECT_LE(k.end_s, ph[0].end_s);
    EXPECT_LE(k.start_s, k.end_s);
  }
  fs::remove_all(dir);
}

// Two realized operands of a 16x8 by 8x4 product, with the profile on and cleared of their
// launches.
class ProfiledOperands : public ::testing::Test {
 protected:
  void SetUp() override {
    realize({a, b});
    clear_profile();
  }
  ProfileOn on;
  Tensor a = randn({16, 8}), b = randn({8, 4});
};

TEST_F(ProfiledOperands, EagerLaunchesAreRecordedWithFlopsAndBytes) {
  Tensor c = a.matmul(b);
  c.realize();
  auto k = profiled_kernels();
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].family, KernelFamily::Product);
  EXPECT_EQ(k[0].reduce_extent, 8);
  EXPECT_GE(k[0].flops, 2.0 * 16 * 8 * 4);  // a multiply and an add per term
  EXPECT_GE(k[0].bytes, 4.0 * (16 * 4));    // at least the output
}

// The FLOP count of one eager realize: one kernel expected.
double flops_of(const Tensor& t) {
  clear_profile();
  t.realize();
  auto k = profiled_kernels();
  EXPECT_EQ(k.size(), 1u);
  return k.empty() ? -1 : k[0].flops;
}

// Hand-counted: a multiply-add is 2 operations, an elementwise op after a reduce (a product's
// bias and activation) runs once per output, an op before it once per reduced term.
TEST(Profile, FlopCountsAreExactPerOutputAndPerTerm) {
  ProfileOn on;
  Tensor a = randn({16, 8}), b = randn({8, 4}), bias = randn({4});
  realize({a, b, bias});
  // 16x4 outputs of 8 terms, a multiply and an add each.
  EXPECT_EQ(flops_of(a.matmul(b)), 2.0 * 16 * 4 * 8);
  // The same product with its bias and tanh fused: 2 more per output, not per term (this read
  // (2 + 2) x 16x4x8 = 2048 when the epilogue was counted once per reduce step).
  EXPECT_EQ(flops_of((a.matmul(b) + bias).tanh()), 2.0 * 16 * 4 * 8 + 2.0 * 16 * 4);
  // A row sum of (2a + 1) times 3: a multiply, an add and the sum's add per term (16x8), the
  // final multiply per row (16).
  EXPECT_EQ(flops_of((a * 2.0f + 1.0f).sum({1}) * 3.0f), 3.0 * 16 * 8 + 16);
  // Elementwise: a multiply and an exp per element.
  EXPECT_EQ(flops_of((a * 2.0f).exp()), 2.0 * 16 * 8);
}

TEST(Profile, AttributionSeparatesWeightGradientProducts) {
  ProfileOn on;
  Tensor x = randn({256, 16});
  Tensor w = randn({16, 8});
  realize({x, w});
  clear_profile();
  Tensor y = x.matmul(w);  // forward: contracts the 16 features
  y.realize();
  Tensor dw = x.transpose(0, 1).matmul(randn({256, 8}));  // x^T dy: contracts the batch of 256
  dw.realize();
  Tensor e = (y * 2).exp();  // elementwise
  e.realize();
  auto k = profiled_kernels();
  std::map<KernelFamily, int> n;
  for (auto& ev : k) n[ev.family]++;
  EXPECT_EQ(n[KernelFamily::Product], 1);
  EXPECT_EQ(n[KernelFamily::WeightGradientProduct], 1);
  EXPECT_GE(n[KernelFamily::Other], 1);
}

TEST(Profile, AttributionOfAStepSumsToOne) {
  manual_seed(2);
  Step step;
  realize({step.x, step.y});
  Jit j([&](const std::vector<Tensor>& in) { return step(in); });
  j({step.x, step.y});
  ProfileOn on;
  j({step.x, step.y});  // the step's launches only (reading the loss is not part of it)
  auto events = profiled_kernels();
  KernelAttribution a = attribute_kernels(events);
  EXPECT_EQ(a.calls, static_cast<int64_t>(events.size()));
  ASSERT_EQ(a.families.size(), 3u);
  double share = 0, seconds = 0;
  int64_t calls = 0;
  for (auto& f : a.families) {
    share += f.share;
    seconds += f.seconds;
    calls += f.calls;
    EXPECT_GE(f.share, 0.0);
  }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_NEAR(seconds, a.seconds, 1e-12);
  EXPECT_EQ(calls, a.calls);
  // 3 layers: at least the forward products (3) and input-gradient products (2); the engine may
  // recompute the forward for the returned loss. Exactly one weight gradient per layer.
  EXPECT_GE(a.families[0].calls, 5);
  EXPECT_EQ(a.families[1].calls, 3);
  EXPECT_GT(a.families[2].calls, 0);
  std::set<uint64_t> programs;
  for (auto& e : events) programs.insert(e.program);
  EXPECT_EQ(a.programs, static_cast<int64_t>(programs.size()));
  EXPECT_LE(a.programs, a.calls);
}

TEST(Profile, AttributionOfNothingHasZeroShares) {
  KernelAttribution a = attribute_kernels({});
  EXPECT_EQ(a.calls, 0);
  for (auto& f : a.families) EXPECT_EQ(f.share, 0.0);
}

TEST(Profile, UnwritableTracePathThrows) {
  EXPECT_THROW(write_trace("/nonexistent-dir-ember/trace.json"), Error);
}

// Structure check of a dot file: one digraph, balanced braces, every edge between declared nodes.
void check_dot(const fs::path& p, size_t min_nodes) {
  const std::string s = slurp(p);
  ASSERT_EQ(s.rfind("digraph ", 0), 0u) << p;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '"' && (i == 0 || s[i - 1] != '\\')) in_string = !in_string;
    if (in_string) continue;
    if (s[i] == '{') depth++;
    if (s[i] == '}') depth--;
    ASSERT_GE(depth, 0) << p;
  }
  EXPECT_EQ(depth, 0) << p;
  EXPECT_FALSE(in_string) << p;
  std::set<std::string> nodes;
  std::regex node_re(R"(^ +(\w+) \[label=)");  // clusters indent their nodes further
  std::regex edge_re(R"(^  (\w+) -> (\w+)[ ;])");
  std::istringstream in(s);
  std::string line;
  std::vector<std::pair<std::string, std::string>> edges;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, edge_re))
      edges.push_back({m[1], m[2]});
    else if (std::regex_search(line, m, node_re))
      nodes.insert(m[1]);
  }
  EXPECT_GE(nodes.size(), min_nodes) << p;
  EXPECT_FALSE(edges.empty()) << p;
  for (auto& [a, b] : edges) {
    EXPECT_TRUE(nodes.count(a)) << p << ": edge from undeclared " << a;
    EXPECT_TRUE(nodes.count(b)) << p << ": edge to undeclared " << b;
  }
}

TEST(Graph, RealizeWritesOpAndKernelGraphs) {
  const fs::path dir = temp_dir("graph");
  Tensor a = randn({4, 8}), b = randn({8, 3});
  realize({a, b});
  Context::get().graph_dir = dir.string();
  Context::get().graph = true;
  Tensor c = (a.matmul(b) + 1).tanh().sum({1});  // a product and a reduce: two kernels
  c.realize();
  Context::get().graph = false;
  std::vector<fs::path> ops, kernels;
  for (auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 8 && n.substr(n.size() - 8) == ".ops.dot") ops.push_back(e.path());
    if (n.find(".kernels.dot") != std::string::npos) kernels.push_back(e.path());
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << "temporary file left: " << n;
  }
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_EQ(kernels.size(), 1u);
  check_dot(ops[0], 6);      // two buffers, the product's ops, tanh, sum, a root
  check_dot(kernels[0], 4);  // >= 1 kernel and its buffers
  const std::string k = slurp(kernels[0]);
  EXPECT_NE(k.find("shape=box"), std::string::npos);
  const std::string o = slurp(ops[0]);
  EXPECT_NE(o.find("TANH"), std::string::npos);
  EXPECT_NE(o.find("SUM"), std::string::npos);
  EXPECT_NE(o.find("BUFFER"), std::string::npos);
  fs::remove_all(dir);
}

// The ops of each cluster of a fused graph, by cluster label ("0: name" -> {"MUL", "SUM", ...}).
std::map<std::string, std::multiset<std::string>> cluster_ops(const std::string& dot) {
  std::map<std::string, std::multiset<std::string>> out;
  std::istringstream in(dot);
  std::string line, cluster;
  std::smatch m;
  const std::regex label_re(R"re(^    label="([^"]*)";)re");
  const std::regex node_re(R"re(^    +\w+ \[label="(\w+))re");
  while (std::getline(in, line)) {
    if (line.rfind("  subgraph cluster_", 0) == 0) cluster = "?";
    if (line == "  }") cluster.clear();
    if (cluster.empty()) continue;
    if (std::regex_search(line, m, label_re)) cluster = m[1];
    if (std::regex_search(line, m, node_re)) out[cluster].insert(m[1]);
  }
  return out;
}

TEST(Graph, FusedGraphDrawsEachKernelAroundItsOps) {
  const fs::path dir = temp_dir("fused");
  ProfileOn on;
  Tensor a = randn({4, 8}), b = randn({8, 3});
  realize({a, b});
  clear_profile();
  Context::get().graph_dir = dir.string();
  Context::get().graph = true;
  Tensor c = (a.matmul(b) + 1).tanh().sum({1});
  c.realize();
  Context::get().graph = false;
  std::vector<fs::path> fused;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().ends_with(".fused.dot")) fused.push_back(e.path());
  ASSERT_EQ(fused.size(), 1u);
  check_dot(fused[0], 6);
  // One cluster per launched kernel, around the very ops the kernel's own expression fused (the
  // kernel table's, walked from the kernel rather than from the graph); movement ops are index
  // arithmetic and may sit in either.
  std::map<std::string, std::multiset<std::string>> expected;
  for (const KernelTableRow& r : profiled_kernel_table()) {
    std::istringstream ops(r.ops);
    std::string op;
    while (ops >> op) expected[r.name].insert(op);
  }
  ASSERT_EQ(expected.size(), 2u);  // the product, then the bias, tanh and row sum
  const auto clusters = cluster_ops(slurp(fused[0]));
  ASSERT_EQ(clusters.size(), expected.size()) << slurp(fused[0]);
  const std::set<std::string> movement{"RESHAPE", "EXPAND", "PERMUTE", "PAD", "SHRINK", "FLIP"};
  for (const auto& [label, ops] : clusters) {
    const std::string name = label.substr(label.find(": ") + 2);
    std::multiset<std::string> compute;
    for (const std::string& op : ops)
      if (!movement.count(op)) compute.insert(op);
    ASSERT_TRUE(expected.count(name)) << label;
    EXPECT_EQ(compute, expected[name]) << label;
  }
  fs::remove_all(dir);
}

// Each launch names the ops whose graph nodes it computes: a product with its fused epilogue
// (two ops, one kernel) and a reduction of another op. A realize of a cached plan is not
// scheduled, so its launches are attributed to no op.
TEST_F(ProfiledOperands, OpAttributionNamesTheOpsEachLaunchComputes) {
  const auto build = [&](OpAttribution& attribution) {
    Tensor p = a.matmul(b);
    attribution.mark(0, {p});
    Tensor q = p * 2 + 1;
    attribution.mark(1, {q});
    Tensor s = b.exp().sum();
    attribution.mark(2, {s});
    realize({q, s});
  };
  std::multiset<std::vector<int>> ops;
  {
    OpAttribution attribution;
    build(attribution);
    for (const auto& l : attribution.launches()) ops.insert(l);
  }
  EXPECT_EQ(ops, (std::multiset<std::vector<int>>{{0, 1}, {2}}));
  OpAttribution again;
  build(again);
  const auto cached = again.launches();
  EXPECT_EQ(cached.size(), 2u);
  for (const auto& l : cached) EXPECT_TRUE(l.empty());
}

TEST_F(ProfiledOperands, KernelTableGroupsLaunchesByProgram) {
  for (int i = 0; i < 3; i++) (a.matmul(b) * 2).realize();  // one program, three launches
  (a + 1).realize();
  const std::vector<KernelEvent> events = profiled_kernels();
  const std::vector<KernelTableRow> table = profiled_kernel_table();
  ASSERT_EQ(table.size(), 2u);
  std::map<uint64_t, std::pair<int64_t, double>> by_program;  // launches, seconds
  for (const KernelEvent& e : events) {
    by_program[e.program].first++;
    by_program[e.program].second += e.end_s - e.start_s;
  }
  for (const KernelTableRow& r : table) {
    ASSERT_TRUE(by_program.count(r.program));
    EXPECT_EQ(r.launches, by_program[r.program].first);
    EXPECT_DOUBLE_EQ(r.seconds, by_program[r.program].second);
    EXPECT_NE(r.source.find("void "), std::string::npos) << r.name;
  }
  const KernelTableRow& product = table[0].launches == 3 ? table[0] : table[1];
  EXPECT_EQ(product.launches, 3);
  EXPECT_EQ(product.ops, "MUL SUM MUL");
  EXPECT_FALSE(product.plan.empty());             // a product's plan always names its tiling
  EXPECT_GE(table[0].seconds, table[1].seconds);  // the most time first

  const fs::path dir = temp_dir("table");
  const std::string path = kernel_table_path((dir / "trace.json").string());
  EXPECT_EQ(path, (dir / "trace.kernels.json").string());
  write_kernel_table(path);
  const nlohmann::json j = nlohmann::json::parse(slurp(path));
  ASSERT_EQ(j["kernels"].size(), 2u);
  for (const nlohmann::json& k : j["kernels"]) {
    const double n = k["launches"].get<double>(), s = k["seconds"].get<double>();
    EXPECT_DOUBLE_EQ(k["gflops"].get<double>(), k["flops"].get<double>() * n / s * 1e-9);
    EXPECT_DOUBLE_EQ(k["gbs"].get<double>(), k["bytes"].get<double>() * n / s * 1e-9);
  }
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), table[0].seconds + table[1].seconds);
  EXPECT_EQ(kernel_table_path("trace"), "trace.kernels.json");
  fs::remove_all(dir);
}
