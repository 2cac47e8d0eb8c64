#include "codegen/target.h"

#include <cstdio>

namespace ember::codegen {

namespace {
// The facts of each level, indexed by Isa. x86-64: 16 xmm/ymm registers; AVX-512 adds 16 more
// (zmm0-31). Scalar float code uses xmm too.
struct IsaFacts {
  const char* name;
  int vector_bytes, vector_registers;
  bool fma, broadcast_load;
};
constexpr IsaFacts kIsaFacts[] = {
    {"scalar", 4, 16, false, false},
    {"sse2", 16, 16, false, false},
    {"avx2", 32, 16, true, true},
    {"avx512", 64, 32, true, true},
};
const IsaFacts& facts(Isa isa) { return kIsaFacts[static_cast<int>(isa)]; }
}  // namespace

const char* isa_name(Isa isa) { return facts(isa).name; }

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
  const IsaFacts& f = facts(isa);
  Target t;
  t.isa = isa;
  t.vector_bytes = f.vector_bytes, t.vector_registers = f.vector_registers;
  t.fma = f.fma, t.broadcast_load = f.broadcast_load;
  t.l1d = l1d, t.l2 = l2, t.l3 = l3;
  return t;
}

}  // namespace ember::codegen
