// The C prelude of every translation unit of kernels (render_c.h's c_prelude): includes, the
// SIMD libm declarations, the kernels' scalar functions and the target's vector types.
#include <string>
#include <tuple>

#include "codegen/render_c.h"

namespace ember::codegen {

using ir::Op;

// The target's SIMD vectors for the register-tiled reduce (render_tile.cpp), unaligned access; a
// plain float / double where the vector is not wider than one element (the scalar level).
static std::string vector_types(const Target& t) {
  std::string s;
  for (auto [v, T, lanes] : {std::tuple{"ember_vf", "float", t.lanes(kFloat32)},
                             std::tuple{"ember_vd", "double", t.lanes(kFloat64)}}) {
    std::string bytes = std::to_string(lanes * (std::string(T) == "float" ? 4 : 8));
    if (lanes == 1)
      s += std::string("typedef ") + T + " " + v + ";\n";
    else
      s +=
          std::string("typedef ") + T + " " + v + " __attribute__((vector_size(" + bytes + ")));\n";
  }
  s += "#define EMBER_VF_LANES " + std::to_string(t.lanes(kFloat32)) + "\n";
  s += "#define EMBER_VD_LANES " + std::to_string(t.lanes(kFloat64)) + "\n";
  s +=
      R"(static inline ember_vf ember_ldf(const float* p) { ember_vf v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline ember_vd ember_ldd(const double* p) { ember_vd v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline void ember_stf(float* p, ember_vf v) { __builtin_memcpy(p, &v, sizeof v); }
static inline void ember_std(double* p, ember_vd v) { __builtin_memcpy(p, &v, sizeof v); }
)";
  return s;
}

// `float expf(float) EMBER_SIMD;` for every SimdLibm op of ops.def (its c_float template names
// the function), float then double, three to a line.
static std::string simd_libm_declarations() {
  std::string out;
  for (const char* T : {"float", "double"}) {
    int n = 0;
    for (int i = 0; i < ir::kNumOps; i++) {
      const ir::OpInfo& op = ir::op_info(static_cast<Op>(i));
      if (!(op.flags & ir::SimdLibm)) continue;
      std::string fn = op.c_float;
      fn = fn.substr(0, fn.find("$f(")) + (std::string(T) == "float" ? "f" : "");
      std::string params = T;
      for (int a = 1; a < op.arity; a++) params += std::string(", ") + T;
      out += std::string(n % 3 ? " " : "") + T + " " + fn + "(" + params + ") EMBER_SIMD;";
      if (++n % 3 == 0) out += "\n";
    }
    if (n % 3) out += "\n";
  }
  return out;
}

// Where one of kernel_scalar.h's inline functions is faster than libmvec's at the target's
// width, the kernels call it instead. AVX2: ember_tanhf takes 0.6x libmvec's time per vector (a
// loop over 64K floats in L2, in one process) and is closer to tanh (1.04 against 2.18 ulp); at
// AVX-512 and at SSE2 libmvec's is faster (SSE2: 0.8x its time; 0.6x in a product's epilogue).
// Kept out (AVX2, tanh(x W^T + b)'s epilogue, paired): two FMAs off their pipes 1.10x the time,
// Estrin's e^2h 1.03x (1.27 ulp), a float clamp 1.16x, a polynomial for the division 1.38x.
static std::string fast_math_overrides(const Target& t) {
  if (t.isa != Isa::Avx2) return "";
  return "#define tanhf(x) ember_tanhf(x)\n";
}

// The scalar functions' text (kernel_scalar_text.cpp, generated from
// ember/support/kernel_scalar.h).
extern const char* const kKernelScalarText;

std::string c_prelude(const Target& t) {
  return R"(#include <math.h>
#include <stdint.h>
#ifdef EMBER_HAVE_MVEC
// glibc's libmvec SIMD variants (<= 4 ulp, IEEE special values kept): loops calling these vectorise
// without -ffast-math.
#define EMBER_SIMD __attribute__((__simd__("notinbranch")))
)" + simd_libm_declarations() +
         "#endif\n" + kKernelScalarText + vector_types(t) + fast_math_overrides(t);
}

}  // namespace ember::codegen
