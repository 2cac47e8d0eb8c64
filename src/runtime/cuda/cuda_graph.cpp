#include "runtime/cuda/cuda_graph.h"

#include <algorithm>
#include <atomic>

namespace ember::runtime {

namespace {

std::atomic<int64_t> g_built{0}, g_updated{0}, g_launched{0};
// Graphs kept at most: a process's jitted functions (each capture's list has its own key). Past
// it, every kept graph is destroyed and built again on use.
constexpr size_t kMaxGraphs = 256;

// The same nodes in the same order (what the instantiated graph can be re-pointed within).
bool same_nodes(const std::vector<GraphLaunch>& a, const std::vector<GraphLaunch>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.fn == y.fn && x.grid == y.grid && x.block == y.block && x.bytes == y.bytes &&
           x.args.size() == y.args.size();
  });
}

// A kernel node's parameters; `values` receives pointers to its arguments (the driver copies the
// argument values when it takes the parameters).
CUDA_KERNEL_NODE_PARAMS kernel_params(const GraphLaunch& l, std::vector<void*>& values) {
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

// A copy node's parameters: `bytes` from device memory args[1] to device memory args[0].
CUDA_MEMCPY3D copy_params(const GraphLaunch& l) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  p.srcDevice = reinterpret_cast<CUdeviceptr>(l.args[1]);
  p.dstDevice = reinterpret_cast<CUdeviceptr>(l.args[0]);
  p.WidthInBytes = l.bytes;
  p.Height = p.Depth = 1;
  return p;
}

}  // namespace

CudaGraphs::~CudaGraphs() {
  for (auto& [key, g] : graphs_) destroy(g);
}

CudaGraphs::Graph CudaGraphs::build(const std::vector<GraphLaunch>& launches, CUcontext ctx) {
  Graph g;
  g.launches = launches;
  try {
    cu::check(d_.cuGraphCreate(&g.graph, 0), "cuGraphCreate");
    std::vector<void*> values;
    for (const GraphLaunch& l : g.launches) {
      // Each node after the one before it: the list's order is its dependencies' order.
      const CUgraphNode* after = g.nodes.empty() ? nullptr : &g.nodes.back();
      const size_t n_after = g.nodes.empty() ? 0 : 1;
      CUgraphNode node = nullptr;
      if (l.fn) {
        const CUDA_KERNEL_NODE_PARAMS p = kernel_params(l, values);
        cu::check(d_.cuGraphAddKernelNode(&node, g.graph, after, n_after, &p),
                  "cuGraphAddKernelNode");
      } else {
        const CUDA_MEMCPY3D p = copy_params(l);
        cu::check(d_.cuGraphAddMemcpyNode(&node, g.graph, after, n_after, &p, ctx),
                  "cuGraphAddMemcpyNode");
      }
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

void CudaGraphs::set_params(Graph& g, size_t i, const GraphLaunch& l, CUcontext ctx) {
  if (l.fn) {
    std::vector<void*> values;
    const CUDA_KERNEL_NODE_PARAMS p = kernel_params(l, values);
    cu::check(d_.cuGraphExecKernelNodeSetParams(g.exec, g.nodes[i], &p),
              "cuGraphExecKernelNodeSetParams");
  } else {
    const CUDA_MEMCPY3D p = copy_params(l);
    cu::check(d_.cuGraphExecMemcpyNodeSetParams(g.exec, g.nodes[i], &p, ctx),
              "cuGraphExecMemcpyNodeSetParams");
  }
  g.launches[i].args = l.args;
}

void CudaGraphs::destroy(Graph& g) {
  if (g.exec) d_.cuGraphExecDestroy(g.exec);
  if (g.graph) d_.cuGraphDestroy(g.graph);
  g = Graph{};
}

void CudaGraphs::launch(uint64_t key, const std::vector<GraphLaunch>& launches, CUcontext ctx) {
  if (launches.empty()) return;  // kernels of no work-items
  auto it = graphs_.find(key);
  if (it != graphs_.end() && !same_nodes(it->second.launches, launches)) {
    destroy(it->second);
    graphs_.erase(it);
    it = graphs_.end();
  }
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) {
      for (auto& [k, g] : graphs_) destroy(g);
      graphs_.clear();
    }
    it = graphs_.emplace(key, build(launches, ctx)).first;
  } else {
    // Other buffers (a replay's new outputs, other inputs): the changed nodes re-pointed.
    bool updated = false;
    for (size_t i = 0; i < launches.size(); i++)
      if (launches[i].args != it->second.launches[i].args) {
        set_params(it->second, i, launches[i], ctx);
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
