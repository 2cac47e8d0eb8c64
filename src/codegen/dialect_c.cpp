// The C dialect (dialect.h): what the cpu device compiles with GCC or clang. A kernel is
//   void NAME(void* const* restrict bufs, int64_t start, int64_t end)
// computing units of work [start, end) (KernelPlan::units; the thread pool splits that range).
#include "codegen/c_expr.h"
#include "codegen/dialect.h"
#include "codegen/render_c.h"

namespace ember::codegen {

namespace {

class CDialect : public Dialect {
 public:
  const char* name() const override { return "c"; }
  std::string prelude(const Target& target) const override { return c_prelude(target); }
  void signature(std::ostringstream& s, const std::string& fn,
                 const schedule::Kernel& k) const override {
    s << "void " << fn << "(void* const* restrict bufs, int64_t start, int64_t end) {\n";
    for (size_t i = 0; i < k.buffers.size(); i++)
      s << "  " << (i >= k.num_outputs() ? "const " : "") << ctype(k.buffers[i].dtype)
        << "* restrict b" << i << " = (" << ctype(k.buffers[i].dtype) << "*)bufs[" << i << "];\n";
  }
  std::string work_item() const override { return ""; }
  const char* float_suffix() const override { return "f"; }
  const char* int64_suffix() const override { return "LL"; }
  std::string ivdep() const override { return "#pragma GCC ivdep"; }
  std::string unroll(int64_t n) const override { return "#pragma GCC unroll " + std::to_string(n); }
};

}  // namespace

const Dialect& c_dialect() {
  static const CDialect d;
  return d;
}

}  // namespace ember::codegen
