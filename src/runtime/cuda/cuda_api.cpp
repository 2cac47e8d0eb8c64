#include "runtime/cuda/cuda_api.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include "ember/error.h"
#include "runtime/numbered_source.h"

namespace ember::runtime::cu {

namespace {

#define EMBER_CU_STR2(f) #f
#define EMBER_CU_STR(f) EMBER_CU_STR2(f)  // the name after cuda.h's renaming

Driver load() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    throw ValueError(std::string("the cuda device is unavailable: no NVIDIA driver (") + dlerror() +
                     ")");
  Driver d;
#define EMBER_CU_LOAD(f)                                                                      \
  d.f = reinterpret_cast<decltype(d.f)>(dlsym(lib, EMBER_CU_STR(f)));                         \
  if (!d.f)                                                                                   \
    throw ValueError("the cuda device is unavailable: the NVIDIA driver lacks " EMBER_CU_STR( \
        f) " (a driver older than the toolkit)");
  EMBER_CU_CALLS(EMBER_CU_LOAD)
#undef EMBER_CU_LOAD
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(r, &name);
    throw ValueError(std::string("the cuda device is unavailable: cuInit failed: ") +
                     (name ? name : std::to_string(r).c_str()) +
                     (r == CUDA_ERROR_NO_DEVICE ? " (no CUDA GPU)" : ""));
  }
  return d;
}

// clang-format off
#define EMBER_NVRTC_CALLS(X)                                                                      \
  X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)             \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcDestroyProgram) X(nvrtcGetErrorString)
// clang-format on

struct Nvrtc {
#define EMBER_NVRTC_MEMBER(f) decltype(&::f) f = nullptr;
  EMBER_NVRTC_CALLS(EMBER_NVRTC_MEMBER)
#undef EMBER_NVRTC_MEMBER
};

Nvrtc load_nvrtc() {
  void* lib = dlopen(EMBER_NVRTC_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen(EMBER_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    throw ValueError(
        std::string(
            "the cuda device is unavailable: NVRTC cannot be loaded from " EMBER_NVRTC_LIBRARY
            " or as " EMBER_NVRTC_SONAME " (") +
        dlerror() + ")");
  Nvrtc n;
#define EMBER_NVRTC_LOAD(f)                                                                     \
  n.f = reinterpret_cast<decltype(n.f)>(dlsym(lib, #f));                                        \
  if (!n.f)                                                                                     \
    throw ValueError("the cuda device is unavailable: NVRTC lacks " #f " (" EMBER_NVRTC_LIBRARY \
                     ")");
  EMBER_NVRTC_CALLS(EMBER_NVRTC_LOAD)
#undef EMBER_NVRTC_LOAD
  return n;
}

const Nvrtc& nvrtc() {
  static const Nvrtc n = load_nvrtc();  // a failure is thrown again by the next use
  return n;
}

}  // namespace

const Driver& driver() {
  static const Driver d = load();  // a failure is thrown again by the next use
  return d;
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  driver().cuGetErrorName(r, &name);
  throw Error(std::string("CUDA: ") + call + " failed: " + (name ? name : std::to_string(r)));
}

std::string compile(const std::string& source, const std::string& arch) {
  const Nvrtc& n = nvrtc();
  nvrtcProgram prog = nullptr;
  if (n.nvrtcCreateProgram(&prog, source.c_str(), "ember_kernels.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    throw Error("NVRTC: nvrtcCreateProgram failed");
  // -default-device: kernel_scalar.h's functions are device functions. -fmad=false: a * b + c
  // rounds twice, as the cpu's C does (no contraction), so that results agree. 177: an unused
  // function (the prelude's scalar functions).
  const std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-default-device", "-fmad=false", "--std=c++17",
                        "-diag-suppress=177"};
  const nvrtcResult r = n.nvrtcCompileProgram(prog, 5, opts);
  std::string out;
  if (r == NVRTC_SUCCESS) {
    size_t size = 0;
    n.nvrtcGetCUBINSize(prog, &size);
    out.resize(size);
    n.nvrtcGetCUBIN(prog, out.data());
  } else {
    size_t size = 0;
    n.nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    n.nvrtcGetProgramLog(prog, log.data());
    n.nvrtcDestroyProgram(&prog);
    throw CompileError(std::string("cuda: NVRTC failed for ") + arch + " (" +
                       n.nvrtcGetErrorString(r) + "):\n" + log.c_str() + "\nsource:\n" +
                       numbered_source(source));
  }
  n.nvrtcDestroyProgram(&prog);
  return out;
}

}  // namespace ember::runtime::cu
