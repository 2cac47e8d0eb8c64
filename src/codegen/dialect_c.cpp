// The C dialect (dialect.h): what the cpu device compiles with GCC or clang. A kernel is
//   void NAME(void* const* restrict bufs, int64_t start, int64_t end)
// computing units of work [start, end) (KernelPlan::units; the thread pool splits that range).
// Also the Dialect's functions, which every dialect shares.
#include "codegen/c_expr.h"
#include "codegen/dialect.h"
#include "codegen/render_c.h"

namespace ember::codegen {

void Dialect::signature(std::ostringstream& s, const std::string& fn,
                        const schedule::Kernel& k) const {
  if (!*s_.kernel) {
    s << "void " << fn << "(void* const* restrict bufs, int64_t start, int64_t end) {\n";
    for (size_t i = 0; i < k.buffers.size(); i++)
      s << "  " << (i >= k.num_outputs() ? "const " : "") << ctype(k.buffers[i].dtype)
        << "* restrict b" << i << " = (" << ctype(k.buffers[i].dtype) << "*)bufs[" << i << "];\n";
    return;
  }
  s << s_.kernel << fn << "(";
  for (size_t i = 0; i < k.buffers.size(); i++)
    s << (i ? ", " : "") << s_.global << (i >= k.num_outputs() ? "const " : "")
      << ctype(k.buffers[i].dtype) << "* " << s_.restrict << " b" << i;
  s << ") {\n";
}

std::string Dialect::local_array(const char* T, const std::string& name, int64_t n) const {
  return std::string(s_.local) + T + " " + name + "[" + std::to_string(n) + "];";
}

const Dialect& c_dialect() {
  // The fields of Spellings (dialect.h), in order.
  static const Dialect d(Spellings{"c", c_prelude, "", "", "restrict", "", "", "", "", "", "f",
                                   "LL", "#pragma GCC ivdep", "#pragma GCC unroll ", false});
  return d;
}

}  // namespace ember::codegen
