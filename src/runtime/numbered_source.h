// A kernel source with numbered lines ("12: ..."), for the build errors of the devices that
// compile at run time (opencl, cuda): the compilers' logs name lines.
#pragma once
#include <string>

namespace ember::runtime {

std::string numbered_source(const std::string& src);

}  // namespace ember::runtime
