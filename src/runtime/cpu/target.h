// Run-time detection of the code-generation target (codegen/target.h) for the CPU this process
// runs on, and the C compiler flags that select its ISA level.
//
// $EMBER_ISA=avx512|avx2|sse2|scalar forces a level at or below the CPU's own (so every x86 path
// can be tested and benchmarked on one machine); an unknown name or a level the CPU (or OS) lacks
// throws ember::ValueError. Read once per process.
#pragma once
#include <string>

#include "codegen/target.h"

namespace ember::runtime {

/// The best level this CPU and OS support (cpuid through the compiler's builtins; non-x86 hosts
/// report scalar).
codegen::Isa host_isa();

/// The target kernels are generated for: host_isa() or the level $EMBER_ISA names, with the cache
/// sizes from sysfs (/sys/devices/system/cpu/cpu0/cache), else sysconf, else 32 KiB / 256 KiB /
/// 8 MiB. Throws ValueError on a bad $EMBER_ISA.
const codegen::Target& host_target();

/// Compiler flags for `t`'s level: -march=native at the host's own level (plus
/// -mprefer-vector-width=512 for avx512); for a forced lower level the matching x86-64 level
/// (x86-64-v3 for avx2, x86-64 for sse2; scalar also turns the auto-vectoriser off), tuned for the
/// host.
std::string target_flags(const codegen::Target& t);

}  // namespace ember::runtime
