// The code-generation target as data (docs/design.md principle 5): the vector ISA level the kernels
// are rendered and compiled for, its vector width and register count, and the cache sizes the tiles
// are blocked for. The runtime detects it (runtime/cpu/target.h); the heuristic, the renderers and
// the compiler flags read it, so no renderer or heuristic holds an ISA constant.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ember/dtype.h"

namespace ember::codegen {

/// x86-64 vector ISA levels, lowest first. Scalar: no vector code at all (the auto-vectoriser is
/// off and the tiled renderer uses one-element "vectors"); sse2: 128-bit vectors, the x86-64
/// baseline; avx2: 256-bit vectors with FMA (x86-64-v3); avx512: 512-bit vectors (x86-64-v4).
enum class Isa { Scalar = 0, Sse2 = 1, Avx2 = 2, Avx512 = 3 };

/// "scalar", "sse2", "avx2", "avx512".
const char* isa_name(Isa isa);
/// The level named `name` (the spellings of isa_name), or nullopt.
std::optional<Isa> parse_isa(const std::string& name);

struct Target {
  Isa isa = Isa::Scalar;
  /// Bytes of one vector register the renderer uses (4 for scalar: one float).
  int vector_bytes = 4;
  /// Architectural vector registers (xmm/ymm/zmm): the register tile must fit in them.
  int vector_registers = 16;
  /// Fused multiply-add available at this level.
  bool fma = false;
  /// A vector broadcast of one element from memory is a single load (AVX's vbroadcastss); without
  /// it (SSE2) it is a scalar load and a shuffle, on the arithmetic's pipes.
  bool broadcast_load = false;
  /// Data cache sizes in bytes (per core for L1/L2; L3 as reported, usually shared).
  int64_t l1d = 32 << 10, l2 = 256 << 10, l3 = 8 << 20;

  /// Elements of `t` per vector (1 when the vector is narrower than one element).
  int64_t lanes(ScalarType t) const;
  /// One line for DEBUG=1 and provenance, e.g. "avx2 (256-bit, 16 registers, FMA; L1d 32 KiB,
  /// ...)".
  std::string str() const;
};

/// The canonical description of level `isa` (vector width, registers, FMA) with the given caches.
Target make_target(Isa isa, int64_t l1d, int64_t l2, int64_t l3);

}  // namespace ember::codegen
