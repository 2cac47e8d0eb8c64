#include "engine/graph_dot.h"

#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "ember/context.h"
#include "ember/error.h"
#include "ember/support/atomic_file.h"
#include "engine/schedule_log.h"

namespace ember::engine {

namespace {

// The op graph below the roots. With `kernels` (a node's schedule item) and `names` (each item's
// kernel name), each kernel is a cluster around the ops it fused.
std::string op_graph(const std::vector<schedule::Root>& roots,
                     const std::unordered_map<const ir::Node*, size_t>* kernels = nullptr,
                     const std::vector<std::string>& names = {}) {
  std::ostringstream o;
  o << "digraph ops {\n  rankdir=BT;\n  node [fontname=\"monospace\", fontsize=10];\n";
  std::unordered_map<const ir::Node*, size_t> ids;
  std::vector<std::string> cluster_lines(names.size());
  std::vector<const ir::Node*> stack;
  for (auto& r : roots) stack.push_back(r.node);
  // Iterative DFS: graphs of a training step are deep.
  while (!stack.empty()) {
    const ir::Node* n = stack.back();
    stack.pop_back();
    if (ids.count(n)) continue;
    const size_t id = ids.size();
    ids[n] = id;
    std::string label = std::string(ir::op_name(n->op)) + "\\n" + dtype_name(n->dtype) + " " +
                        ir::shape_str(n->shape);
    const char* shape = "ellipse";
    if (n->op == ir::Op::BUFFER) {
      label += "\\nbuffer " + std::to_string(ir::buffer_id(*n));
      shape = "box";
    } else if (n->op == ir::Op::CONST) {
      char v[32];
      std::snprintf(v, sizeof v, "%g", n->const_value());
      label += std::string("\\n") + v;
      shape = "plaintext";
    }
    const std::string line =
        "  n" + std::to_string(id) + " [label=\"" + label + "\", shape=" + shape + "];\n";
    size_t cluster = cluster_lines.size();  // none
    if (kernels)
      if (auto k = kernels->find(n); k != kernels->end()) cluster = k->second;
    if (cluster < cluster_lines.size())
      cluster_lines[cluster] += "  " + line;
    else
      o << line;
    if (n->op != ir::Op::BUFFER)
      for (auto& s : n->src) stack.push_back(s.get());
  }
  for (size_t i = 0; i < cluster_lines.size(); i++)
    if (!cluster_lines[i].empty())
      o << "  subgraph cluster_k" << i << " {\n    label=\"" << i << ": " << names[i]
        << "\";\n    style=filled;\n    fillcolor=\"#dde8f5\";\n"
        << cluster_lines[i] << "  }\n";
  for (auto& [n, id] : ids)
    if (n->op != ir::Op::BUFFER)
      for (auto& s : n->src) o << "  n" << ids.at(s.get()) << " -> n" << id << ";\n";
  for (size_t i = 0; i < roots.size(); i++)
    o << "  root" << i << " [label=\"root " << i << (roots[i].target ? " (in place)" : "")
      << "\", shape=doubleoctagon];\n  n" << ids.at(roots[i].node) << " -> root" << i << ";\n";
  o << "}\n";
  return o.str();
}

// A buffer's Graphviz id: b<storage id> for the caller's buffers, f<i> for the schedule's new ones.
std::string buffer_id(schedule::BufferName b) {
  char id[24];
  std::snprintf(id, sizeof id, "%c%lld", b > 0 ? 'b' : 'f',
                static_cast<long long>(b > 0 ? b : -b - 1));
  return id;
}

std::string kernel_graph(const schedule::Schedule& sched,
                         const std::vector<std::shared_ptr<runtime::Program>>& programs) {
  std::ostringstream o;
  o << "digraph kernels {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
  std::unordered_map<schedule::BufferName, bool> declared;
  auto buffer = [&](schedule::BufferName b, const schedule::KernelBuffer& kb) {
    if (!declared.emplace(b, true).second) return;
    o << "  " << buffer_id(b) << " [label=\"" << (b > 0 ? "buffer " : "new buffer ")
      << (b > 0 ? b : -b - 1) << "\\n"
      << dtype_name(kb.dtype) << "[" << kb.numel << "]\", shape=ellipse];\n";
  };
  std::unordered_map<schedule::BufferName, schedule::KernelBuffer> kind;
  for (size_t i = 0; i < sched.items.size(); i++) {
    const auto& item = sched.items[i];
    const std::string name =
        i < programs.size() && programs[i] ? programs[i]->name : item.kernel.name();
    o << "  k" << i << " [label=\"" << i << ": " << name << "\", shape=box, style=filled, "
      << "fillcolor=\"#dde8f5\"];\n";
    for (size_t s = 0; s < item.buffers.size(); s++) {
      buffer(item.buffers[s], item.kernel.buffers[s]);
      kind.emplace(item.buffers[s], item.kernel.buffers[s]);
    }
    const size_t outs = item.kernel.num_outputs();
    for (size_t s = 0; s < outs; s++)
      o << "  k" << i << " -> " << buffer_id(item.buffers[s]) << ";\n";
    for (size_t s = outs; s < item.buffers.size(); s++)
      o << "  " << buffer_id(item.buffers[s]) << " -> k" << i << ";\n";
  }
  for (auto& [src, dst] : sched.copies) {
    const schedule::KernelBuffer kb = kind.count(src) ? kind.at(src) : schedule::KernelBuffer{};
    buffer(src, kb);
    buffer(dst, kb);
    o << "  " << buffer_id(src) << " -> " << buffer_id(dst) << " [style=dashed, label=\"copy\"];\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace

void write_realize_graphs(const std::vector<schedule::Root>& roots, const schedule::Schedule& sched,
                          const std::vector<std::shared_ptr<runtime::Program>>& programs,
                          const std::string& dir) {
  static std::atomic<int> counter{0};
  const int n = counter++;
  if (n >= Context::kMaxGraphRealizes) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("GRAPH: cannot create " + dir + ": " + ec.message());
  char stem[32];
  std::snprintf(stem, sizeof stem, "realize-%05d", n);
  const std::filesystem::path base(dir);
  support::write_file_atomic((base / (std::string(stem) + ".ops.dot")).string(), op_graph(roots),
                             "GRAPH: ");
  support::write_file_atomic((base / (std::string(stem) + ".kernels.dot")).string(),
                             kernel_graph(sched, programs), "GRAPH: ");
  std::vector<std::string> names;
  for (size_t i = 0; i < sched.items.size(); i++)
    names.push_back(i < programs.size() && programs[i] ? programs[i]->name
                                                       : sched.items[i].kernel.name());
  const auto kernels = kernel_of(sched);
  support::write_file_atomic((base / (std::string(stem) + ".fused.dot")).string(),
                             op_graph(roots, &kernels, names), "GRAPH: ");
}

}  // namespace ember::engine
