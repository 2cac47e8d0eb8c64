// Measured peak float32 arithmetic rate of one ISA level (for bench_matmul's "% peak" column):
// independent multiply-add chains in registers, with the level's widest instructions (FMA where
// the level has it, else separate multiply and add), on `threads` threads at once.
#pragma once
#include <string>

namespace ember::bench {

/// GFLOPS of `level` ("avx512", "avx2", "sse2" or "scalar") on `threads` threads; 0 for an unknown
/// level.
double measured_peak_gflops(const std::string& level, int threads);

}  // namespace ember::bench
