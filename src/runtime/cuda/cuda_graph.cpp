#include "runtime/cuda/cuda_graph.h"

#include <algorithm>
#include <atomic>

namespace ember::runtime {

namespace {

std::atomic<int64_t> g_built{0}, g_updated{0}, g_launched{0};
// Graphs kept at most: a process's jitted functions (each capture's list has its own key). Past
// it, every kept graph is destroyed and built again on use.
constexpr size_t kMaxGraphs = 256;

bool same_kernels(const std::vector<GraphLaunch>& a, const std::vector<GraphLaunch>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.fn == y.fn && x.grid == y.grid && x.block == y.block && x.args.size() == y.args.size();
  });
}

// The node parameters of launch `l`; `values` receives pointers to its arguments (the driver
// copies the argument values when it takes the parameters).
CUDA_KERNEL_NODE_PARAMS node_params(const GraphLaunch& l, std::vector<void*>& values) {
  values.resize(l.args.size());
  for (size_t i = 0; i < l.args.size(); i++) values[i] = const_cast<void**>(&l.args[i]);
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = l.fn;
  p.gridDimX = l.grid;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = l.block;
  p.blockDimY = p.blockDimZ = 1;
  p.sharedMemBytes = 0;  // the kernels' shared arrays are static
  p.kernelParams = values.data();
  return p;
}

}  // namespace

CudaGraphs::~CudaGraphs() {
  for (auto& [key, g] : graphs_) destroy(g);
}

CudaGraphs::Graph CudaGraphs::build(const std::vector<GraphLaunch>& launches) {
  Graph g;
  g.launches = launches;
  try {
    cu::check(d_.cuGraphCreate(&g.graph, 0), "cuGraphCreate");
    std::vector<void*> values;
    for (const GraphLaunch& l : g.launches) {
      const CUDA_KERNEL_NODE_PARAMS p = node_params(l, values);
      CUgraphNode node = nullptr;
      // Each kernel after the one before it: the list's order is its dependencies' order.
      cu::check(d_.cuGraphAddKernelNode(&node, g.graph, g.nodes.empty() ? nullptr : &g.nodes.back(),
                                        g.nodes.empty() ? 0 : 1, &p),
                "cuGraphAddKernelNode");
      g.nodes.push_back(node);
    }
    cu::check(d_.cuGraphInstantiate(&g.exec, g.graph, 0), "cuGraphInstantiate");
  } catch (...) {
    destroy(g);
    throw;
  }
  g_built++;
  return g;
}

void CudaGraphs::destroy(Graph& g) {
  if (g.exec) d_.cuGraphExecDestroy(g.exec);
  if (g.graph) d_.cuGraphDestroy(g.graph);
  g = Graph{};
}

void CudaGraphs::launch(uint64_t key, const std::vector<GraphLaunch>& launches) {
  if (launches.empty()) return;  // kernels of no work-items
  auto it = graphs_.find(key);
  if (it != graphs_.end() && !same_kernels(it->second.launches, launches)) {
    destroy(it->second);
    graphs_.erase(it);
    it = graphs_.end();
  }
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) {
      for (auto& [k, g] : graphs_) destroy(g);
      graphs_.clear();
    }
    it = graphs_.emplace(key, build(launches)).first;
  } else {
    Graph& g = it->second;
    bool updated = false;
    std::vector<void*> values;
    for (size_t i = 0; i < launches.size(); i++) {
      if (launches[i].args == g.launches[i].args) continue;
      const CUDA_KERNEL_NODE_PARAMS p = node_params(launches[i], values);
      cu::check(d_.cuGraphExecKernelNodeSetParams(g.exec, g.nodes[i], &p),
                "cuGraphExecKernelNodeSetParams");
      g.launches[i].args = launches[i].args;
      updated = true;
    }
    g_updated += updated;
  }
  cu::check(d_.cuGraphLaunch(it->second.exec, nullptr), "cuGraphLaunch");
  g_launched++;
  cu::check(d_.cuCtxSynchronize(), "cuCtxSynchronize");  // a kernel's fault, here
}

CudaGraphCounts CudaGraphs::counts() {
  return {g_built.load(), g_updated.load(), g_launched.load()};
}

}  // namespace ember::runtime
