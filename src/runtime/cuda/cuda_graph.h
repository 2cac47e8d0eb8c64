// Jit replays as CUDA graphs (issue 41): a replay's launch list, whose buffers all live on the
// cuda device, is built once into a graph of kernel and copy nodes (a chain, in the list's order)
// and relaunched with one cuGraphLaunch on later replays. While the kernels are the same, a replay
// on other buffers (new outputs, other inputs) re-points the nodes whose arguments changed in the
// instantiated graph (cuGraphExecKernelNodeSetParams); other kernels build the graph again.
// Internal to the cuda device, which serialises the calls.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/cuda_device.h"

namespace ember::runtime {

/// One node of a graph: a kernel launch (the function, its grid and block, 1-D, and its
/// arguments: the buffers' CUdeviceptr values, in slot order), or, without a function, a copy of
/// `bytes` from the buffer args[1] into args[0].
struct GraphLaunch {
  CUfunction fn = nullptr;
  unsigned grid = 1, block = 1;
  std::vector<void*> args;
  size_t bytes = 0;
};

class CudaGraphs {
 public:
  explicit CudaGraphs(const cu::Driver& d) : d_(d) {}
  ~CudaGraphs();
  CudaGraphs(const CudaGraphs&) = delete;
  CudaGraphs& operator=(const CudaGraphs&) = delete;

  /// Runs `launches` in order as the graph kept for `key` (a jit capture's list: runtime::Device::
  /// launch_graph), built or re-pointed first where needed, and waits for it. The calling
  /// thread's current context must be the device's.
  void launch(uint64_t key, const std::vector<GraphLaunch>& launches, CUcontext ctx);
  static CudaGraphCounts counts();

 private:
  struct Graph {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUgraphNode> nodes;
    std::vector<GraphLaunch> launches;  // as built or last re-pointed
  };
  Graph build(const std::vector<GraphLaunch>& launches, CUcontext ctx);
  // Points node i of g's instantiated graph at l's buffers.
  void set_params(Graph& g, size_t i, const GraphLaunch& l, CUcontext ctx);
  void destroy(Graph& g);

  const cu::Driver& d_;
  std::unordered_map<uint64_t, Graph> graphs_;
};

}  // namespace ember::runtime
