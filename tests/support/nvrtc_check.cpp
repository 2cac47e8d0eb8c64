#include "nvrtc_check.h"

#include <mutex>
#include <set>
#include <vector>

#include "codegen/dialect.h"
#include "codegen/render_gpu.h"
#include "ember/error.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/device.h"

namespace ember::test {

namespace {

constexpr const char* kPlaceholder = "ember_kernel_";
constexpr size_t kPerUnit = 64;

class NvrtcCheckDevice : public runtime::Device {
 public:
  std::string name() const override { return "nvrtc-check"; }
  // Rendered here, so that a kernel the CUDA dialect cannot render fails the case that made it.
  std::vector<std::shared_ptr<runtime::Program>> prepare(
      const std::vector<const schedule::Kernel*>& kernels) override {
    for (const schedule::Kernel* k : kernels) {
      std::string src =
          codegen::render_gpu(*k, codegen::gpu_plan(*k), kPlaceholder, codegen::cuda_dialect());
      std::lock_guard<std::mutex> lock(mu_);
      sources_.insert(std::move(src));
    }
    return cpu().prepare(kernels);
  }
  void build(const std::vector<std::shared_ptr<runtime::Program>>& programs) override {
    cpu().build(programs);
  }

  size_t recorded() {
    std::lock_guard<std::mutex> lock(mu_);
    return sources_.size();
  }
  std::vector<std::string> sources() {
    std::lock_guard<std::mutex> lock(mu_);
    return {sources_.begin(), sources_.end()};
  }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out(sources_.begin(), sources_.end());
    sources_.clear();
    return out;
  }

 private:
  static runtime::Device& cpu() { return runtime::get_device("cpu"); }
  std::mutex mu_;
  std::set<std::string> sources_;
};

NvrtcCheckDevice& the_device() {
  static NvrtcCheckDevice d;
  return d;
}

// The kernel's source with its placeholder name numbered within its unit.
std::string named(const std::string& src, size_t i) {
  std::string out = src;
  const size_t at = out.find(kPlaceholder);
  std::string fn = "k";  // appended piece by piece (GCC 12's false -Wrestrict on +)
  fn += std::to_string(i);
  out.replace(at, std::string(kPlaceholder).size(), fn);
  return out;
}

}  // namespace

void register_nvrtc_check_device() { runtime::register_device("nvrtc-check", the_device()); }

size_t recorded_cuda_kernels() { return the_device().recorded(); }

std::vector<std::string> recorded_cuda_sources() { return the_device().sources(); }

std::string compile_recorded(const std::string& arch) {
  const std::vector<std::string> sources = the_device().take();
  const std::string prelude = codegen::cuda_dialect().prelude(codegen::Target{});
  for (size_t at = 0; at < sources.size(); at += kPerUnit) {
    std::string unit = prelude;
    for (size_t i = at; i < std::min(sources.size(), at + kPerUnit); i++)
      unit += "\n" + named(sources[i], i - at);
    try {
      runtime::cuda_compile(unit, arch);
    } catch (const Error& e) {
      return e.what();
    }
  }
  return "";
}

}  // namespace ember::test
