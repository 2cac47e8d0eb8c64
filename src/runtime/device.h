// The device interface (docs/design.md principle 6): a device turns kernels into programs and
// launches them on buffers. Memory is host memory for both devices here (runtime::Storage).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "schedule/kernel.h"

namespace ember::runtime {

/// A kernel ready to launch on one device.
struct Program {
  virtual ~Program() = default;
  std::string name;
  schedule::Kernel kernel;  // simplified kernel (what both devices execute)
  std::string opts;         // applied optimisations (DEBUG=3)
  std::string source;       // generated source, if any (DEBUG=4)
  /// Runs the whole kernel on `bufs` (slot order).
  virtual void launch(void* const* bufs) const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  /// Builds programs for kernels (already simplified); one batch (compiler.h) for all of them.
  virtual std::vector<std::shared_ptr<Program>> compile(
      const std::vector<const schedule::Kernel*>& kernels) = 0;
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

/// "cpu" (generated C, compiled and dlopen'ed) or "interp" (reference evaluator).
Device& get_device(const std::string& name);

}  // namespace ember::runtime
