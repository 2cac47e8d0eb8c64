// Helpers of the kernel plan tests: the kernels a realize would launch, from the scheduler (nothing
// runs), simplified as the devices receive them; and fixed targets of each ISA level.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/target.h"
#include "ember/ember.h"
#include "schedule/schedule.h"

namespace ember::test {

/// The simplified kernels of realizing `ts` together, in launch order.
inline std::vector<schedule::Kernel> kernels_of(const std::vector<Tensor>& ts) {
  std::vector<schedule::Root> roots;
  for (const Tensor& t : ts) roots.push_back({t.node().get(), 0});
  // The graph's buffers named by their ids (nothing here reads an overwritten version).
  const schedule::NameBuffer name = [](const ir::Node& n) {
    return static_cast<schedule::BufferName>(ir::buffer_id(n));
  };
  std::vector<schedule::Kernel> out;
  for (const auto& item : schedule::create_schedule(roots, name).items)
    out.push_back(schedule::simplify(item.kernel));
  return out;
}

/// The kernel of `ts` named `name` (Kernel::name()); fails the test when there is none.
inline schedule::Kernel kernel_named(const std::vector<Tensor>& ts, const std::string& name) {
  std::string names;
  for (schedule::Kernel& k : kernels_of(ts)) {
    if (k.name() == name) return k;
    names.append(" ").append(k.name());  // not " " + k.name(): GCC 12 -Wrestrict false positive
  }
  ADD_FAILURE() << "no kernel " << name << " among" << names;
  return {};
}

/// The target of `isa` with fixed caches (48 KiB L1d, 1 MiB L2, 32 MiB L3), so that plans do not
/// depend on the machine that runs the test.
inline codegen::Target target_of(codegen::Isa isa) {
  return codegen::make_target(isa, 48 << 10, 1 << 20, 32 << 20);
}

inline const std::vector<codegen::Isa>& all_isas() {
  static const std::vector<codegen::Isa> v = {codegen::Isa::Scalar, codegen::Isa::Sse2,
                                              codegen::Isa::Avx2, codegen::Isa::Avx512};
  return v;
}

}  // namespace ember::test
