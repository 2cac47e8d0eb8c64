// The device interface (docs/design.md principle 6): a device turns kernels into programs and
// launches them on buffers, and owns the memory of its buffers. A program of a device with memory
// of its own (opencl, cuda) takes that memory's buffers: the engine gives it those of the storages
// that live there (runtime::Storage) and copies host storages in and out around the launch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedule/kernel.h"

namespace ember::runtime {

class Device;

/// A kernel ready to launch on one device.
struct Program {
  virtual ~Program() = default;
  std::string name;
  schedule::Kernel kernel;  // simplified kernel (what both devices execute)
  std::string opts;         // applied optimisations (DEBUG=3)
  std::string source;       // generated source, if any (DEBUG=4)
  /// The device whose buffers launch() takes (DeviceBuffer handles); null: host pointers.
  Device* memory = nullptr;
  /// Runs the whole kernel on `bufs` (slot order).
  virtual void launch(void* const* bufs) const = 0;
};

/// A buffer in a device's memory: the device's handle (host memory for cpu and interp, a cl_mem
/// for opencl, a CUdeviceptr's value for cuda) and its size in bytes.
struct DeviceBuffer {
  void* handle = nullptr;
  size_t bytes = 0;
};

/// One step of a sequence that a device runs as one (Device::launch_graph): `program` (the
/// device's, built) on `args` (its buffer handles in slot order), or, without a program, a copy of
/// `bytes` from the buffer args[1] into args[0] (both the device's).
struct SequenceStep {
  const Program* program = nullptr;
  std::vector<void*> args;
  size_t bytes = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  /// Device memory. The defaults are host memory (cpu, interp: zero-copy, 64-byte aligned, freed
  /// blocks reused: host_blocks.h); copies are of `bytes` from the buffers' starts, which must fit
  /// in both. allocate() throws ember::Error when the memory is exhausted.
  virtual DeviceBuffer allocate(size_t bytes);
  virtual void free(DeviceBuffer b);
  virtual void copy_in(DeviceBuffer dst, const void* src, size_t bytes);  // host -> device
  virtual void copy_out(void* dst, DeviceBuffer src, size_t bytes);       // device -> host
  virtual void copy(DeviceBuffer dst, DeviceBuffer src, size_t bytes);    // device -> device
  /// True for a device with memory of its own (opencl, cuda), where tensors can live (Tensor::to);
  /// false for those that run on host memory (cpu, interp).
  virtual bool own_memory() const { return false; }
  /// A jit replay's launches as one (see SequenceStep), in order. A device that can record the
  /// sequence once and relaunch it (cuda: a CUDA graph) runs it, keeping what it recorded under
  /// `key` (a capture's list, engine::LaunchList::graph_key), and returns true; false (the
  /// default): the caller launches the steps one by one.
  virtual bool launch_graph(uint64_t key, const std::vector<SequenceStep>& steps) {
    (void)key, (void)steps;
    return false;
  }

  virtual std::string name() const = 0;
  /// Builds programs for kernels (already simplified); one batch (compiler.h) for all of them.
  /// A device overrides either this (no build step) or prepare() and build(), whose two steps
  /// it is by default.
  virtual std::vector<std::shared_ptr<Program>> compile(
      const std::vector<const schedule::Kernel*>& kernels) {
    auto programs = prepare(kernels);
    build(programs);
    return programs;
  }
  /// Two-step compile, so that the kernels of several schedules become one batch: prepare()
  /// makes programs that must not launch until build() has built them (build() takes the
  /// programs of any number of prepare() calls and builds the unbuilt ones as one batch).
  /// Devices without a build step build in prepare().
  virtual std::vector<std::shared_ptr<Program>> prepare(
      const std::vector<const schedule::Kernel*>& kernels) {
    return compile(kernels);
  }
  virtual void build(const std::vector<std::shared_ptr<Program>>& programs) { (void)programs; }
};

/// Helpers of the devices' compile steps.
/// One program per kernel, in order, made by `make(kernel)`.
template <class Make>
std::vector<std::shared_ptr<Program>> make_programs(
    const std::vector<const schedule::Kernel*>& kernels, Make make) {
  std::vector<std::shared_ptr<Program>> out;
  for (const schedule::Kernel* k : kernels) out.push_back(make(*k));
  return out;
}

/// A program of type P for `k`, its kernel and name set.
template <class P>
std::shared_ptr<P> new_program(const schedule::Kernel& k) {
  auto p = std::make_shared<P>();
  p->kernel = k;
  p->name = k.name();
  return p;
}

/// The programs (all of type P) that build() has not built yet (no `fn`), in order.
template <class P>
std::vector<P*> unbuilt(const std::vector<std::shared_ptr<Program>>& programs) {
  std::vector<P*> todo;
  for (auto& p : programs)
    if (auto* c = static_cast<P*>(p.get()); !c->fn) todo.push_back(c);
  return todo;
}

/// The function name of the i-th kernel of a build batch, "k<i>_<name>": numbered within the
/// batch, so that a batch's text (and its cache key) depends only on its kernels.
inline std::string batch_symbol(size_t i, const std::string& name) {
  std::string symbol = "k";  // appended piece by piece (GCC 12's false -Wrestrict on +)
  symbol += std::to_string(i);
  symbol += '_';
  symbol += name;
  return symbol;
}

/// "cpu" (generated C, compiled and dlopen'ed), "interp" (reference evaluator), "opencl" (OpenCL
/// C on the first OpenCL GPU, else the first OpenCL device; runtime/opencl/) or "cuda" (CUDA C++
/// by NVRTC on the first CUDA GPU; runtime/cuda/). Throws ValueError for an unknown name, or for
/// opencl or cuda when ember was built without it or it finds no device.
Device& get_device(const std::string& name);

/// Makes `device` known to get_device under `name` (not one of the names above), for tests: e.g.
/// a device that runs the cpu's programs and also compiles each kernel for another device.
void register_device(const std::string& name, Device& device);

/// The OpenCL platforms the ICD loader finds, one line each: "name (version): device, ...". Throws
/// ValueError when ember was built without OpenCL.
std::vector<std::string> opencl_platforms();

}  // namespace ember::runtime
