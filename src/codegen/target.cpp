#include "codegen/target.h"

#include <cstdio>

namespace ember::codegen {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar:
      return "scalar";
    case Isa::Sse2:
      return "sse2";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "scalar";
}

std::optional<Isa> parse_isa(const std::string& name) {
  for (Isa i : {Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512})
    if (name == isa_name(i)) return i;
  return std::nullopt;
}

int64_t Target::lanes(ScalarType t) const {
  int64_t n = vector_bytes / static_cast<int64_t>(element_size(t));
  return n < 1 ? 1 : n;
}

namespace {
std::string bytes(int64_t b) {
  char buf[32];
  if (b >= (1 << 20) && b % (1 << 20) == 0)
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(b >> 20));
  else if (b >= (1 << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(b >> 10));
  return buf;
}
}  // namespace

std::string Target::str() const {
  return std::string(isa_name(isa)) + " (" + std::to_string(vector_bytes * 8) + "-bit vectors, " +
         std::to_string(vector_registers) + " registers, " + (fma ? "FMA" : "no FMA") + "; L1d " +
         bytes(l1d) + ", L2 " + bytes(l2) + ", L3 " + bytes(l3) + ")";
}

Target make_target(Isa isa, int64_t l1d, int64_t l2, int64_t l3) {
  Target t;
  t.isa = isa;
  // x86-64: 16 xmm/ymm registers; AVX-512 adds 16 more (zmm0-31). Scalar float code uses xmm too.
  switch (isa) {
    case Isa::Scalar:
      t.vector_bytes = 4, t.vector_registers = 16, t.fma = false;
      break;
    case Isa::Sse2:
      t.vector_bytes = 16, t.vector_registers = 16, t.fma = false;
      break;
    case Isa::Avx2:
      t.vector_bytes = 32, t.vector_registers = 16, t.fma = true, t.broadcast_load = true;
      break;
    case Isa::Avx512:
      t.vector_bytes = 64, t.vector_registers = 32, t.fma = true, t.broadcast_load = true;
      break;
  }
  t.l1d = l1d, t.l2 = l2, t.l3 = l3;
  return t;
}

}  // namespace ember::codegen
