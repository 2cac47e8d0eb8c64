// ember/profile.h — the PROFILE=1 kernel trace and its attribution (docs/design.md principle 8).
//
// While Context::profile is on (PROFILE=1 in the environment), every kernel launch (eager or jit
// replay) is timed and recorded, and ProfilePhase scopes (the trainer's collect / evaluate /
// update) are recorded next to them. write_trace() renders both as a Chrome trace-event JSON that
// chrome://tracing and ui.perfetto.dev open ("X" complete events, timestamps in microseconds since
// the first recorded event). With PROFILE=1 the process writes Context::profile_path at exit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

/// What a kernel computes, for the study's attribution of an optimizer step.
enum class KernelFamily {
  Product,                ///< matrix product contracting a feature axis: forward, input gradient
  WeightGradientProduct,  ///< matrix product contracting the batch axis (dW = x^T dy)
  Other,                  ///< elementwise, plain reductions, optimizer updates, copies
};
const char* kernel_family_name(KernelFamily f);

/// One kernel launch. Times are seconds on the steady clock since the profile's origin.
struct KernelEvent {
  std::string name;      ///< kernel name (as DEBUG=2 prints it)
  uint64_t program = 0;  ///< identifies the compiled program (equal ids: same program)
  double start_s = 0, end_s = 0;
  double flops = 0, bytes = 0;  ///< the kernel's operation count and bytes touched
  int thread = 0;               ///< small id of the launching thread (1 = first one seen)
  std::vector<int64_t> shape;   ///< loop space (output axes, then reduce axes)
  int64_t reduce_extent = 1;    ///< product of the reduced axes (1: elementwise)
  KernelFamily family = KernelFamily::Other;
};

/// A named span of host work (ProfilePhase).
struct PhaseEvent {
  std::string name;
  double start_s = 0, end_s = 0;
  int thread = 0;
};

/// Records [construction, destruction) as a phase when profiling is on; free when it is off.
class ProfilePhase {
 public:
  explicit ProfilePhase(const char* name);
  ~ProfilePhase();
  ProfilePhase(const ProfilePhase&) = delete;
  ProfilePhase& operator=(const ProfilePhase&) = delete;

 private:
  const char* name_;
  double start_ = -1;
};

/// Copies of the events recorded so far (thread-safe).
std::vector<KernelEvent> profiled_kernels();
std::vector<PhaseEvent> profiled_phases();
/// Drops every recorded event (the origin stays).
void clear_profile();

/// One compiled program's launches in the profile: the kernel table of `ember train --profile`.
struct KernelTableRow {
  std::string name;      ///< kernel name (as DEBUG=2 prints it)
  uint64_t program = 0;  ///< KernelEvent::program
  int64_t launches = 0;
  double seconds = 0;           ///< summed launch time
  double flops = 0, bytes = 0;  ///< per launch (KernelEvent)
  std::vector<int64_t> shape;   ///< loop space (output axes, then reduce axes)
  KernelFamily family = KernelFamily::Other;
  std::string ops;     ///< the primitive ops fused into it, in evaluation order ("MUL SUM ADD")
  std::string plan;    ///< its applied optimisations (DEBUG=3's text)
  std::string source;  ///< its generated source (DEBUG=4's text; empty on interp)
};
/// The recorded launches grouped by program, the most total time first.
std::vector<KernelTableRow> profiled_kernel_table();
/// Writes profiled_kernel_table() as JSON to `path`: {"kernels": [{name, program, launches,
/// seconds, flops, bytes, gflops, gbs, shape, family, ops, plan, source}], "seconds"}; flops and
/// bytes per launch, gflops and gbs = flops x launches / seconds / 1e9 (bytes likewise).
/// Atomic like write_trace; throws ember::Error when the file cannot be written.
void write_kernel_table(const std::string& path);
/// Where the kernel table goes beside a trace: "<trace without .json>.kernels.json".
std::string kernel_table_path(const std::string& trace_path);

/// Writes the recorded events as Chrome trace JSON to `path` (temp file + rename, so a reader never
/// sees half a trace). Throws ember::Error when the file cannot be written.
void write_trace(const std::string& path);

/// Calls, distinct programs and kernel time of one family, and its share of all kernel time.
struct FamilyShare {
  KernelFamily family;
  int64_t calls = 0, programs = 0;
  double seconds = 0;
  double share = 0;  ///< seconds / total seconds, in [0, 1]; the three shares sum to 1
};
/// The study's attribution of a set of launches (e.g. one optimizer step): totals and one entry
/// per family, in KernelFamily order. With no kernel time at all every share is 0.
struct KernelAttribution {
  int64_t calls = 0, programs = 0;
  double seconds = 0;
  std::vector<FamilyShare> families;
};
KernelAttribution attribute_kernels(const std::vector<KernelEvent>& events);

}  // namespace ember
