// run(): the one loop that launches kernels (launch_list.h), the calling thread's sink
// (launch_sink.h) and the deferred queue that DeferLaunches scopes fill and sync() empties.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

#include "ember/context.h"
#include "ember/error.h"
#include "ember/support/clock.h"
#include "ember/support/recycled_alloc.h"
#include "ember/support/shape_str.h"
#include "engine/graph_launch.h"
#include "engine/kernel_summary.h"
#include "engine/launch_list.h"
#include "engine/launch_sink.h"
#include "engine/profiler.h"
#include "engine/programs.h"
#include "engine/stats.h"
#include "engine/tune.h"

namespace ember::engine {

namespace {

// One run held back: the list and the buffer of each of its slots.
struct Queued {
  LaunchList list;
  std::vector<StorageRef> slots;
};

// The deferred launches of every thread's DeferLaunches scopes and the programs they wait for.
struct Deferred {
  std::mutex mu;  // held while the queue is compiled and run
  std::vector<Queued> launches;
  std::vector<std::shared_ptr<runtime::Program>> unbuilt;
  std::vector<std::string> unbuilt_keys;
  runtime::Device* device = nullptr;
};
Deferred& deferred() {
  static Deferred d;
  return d;
}
std::atomic<bool> g_queue_nonempty{false};
thread_local bool t_running_queue = false;

std::string shape_text(const std::vector<int64_t>& s) {
  return s.empty() ? "1" : support::dims_str(s);
}

// Launches p on ptrs, with DEBUG=2 / PROFILE timing.
void timed_launch(const runtime::Program& p, void* const* ptrs) {
  const Context& ctx = Context::get();
  auto& stats = runtime_stats();
  stat_add(stats.kernels_launched);
  if (ctx.debug < 2 && !ctx.profile_kernels && !ctx.profile) {
    p.launch(ptrs);
    return;
  }
  const double t0 = profile_now();
  p.launch(ptrs);
  const double t1 = profile_now();
  const double dt = t1 - t0;
  stat_add(stats.kernel_seconds, dt);
  if (ctx.profile) record_kernel(p, t0, t1);
  if (ctx.debug < 2) return;
  note_kernel_time(p, dt);
  const auto& k = p.kernel;
  double fl = k.flops(), by = k.bytes();
  std::fprintf(stderr,
               "  kernel %-28s %-18s %9.1f us %10.3g FLOP %10.3g B %8.2f GFLOPS %8.2f GB/s\n",
               p.name.c_str(), shape_text(k.full_shape).c_str(), dt * 1e6, fl, by, fl / dt * 1e-9,
               by / dt * 1e-9);
  if (ctx.debug < 3) return;
  std::fprintf(stderr, "    fused: %s\n", fused_ops(k).c_str());
  if (!p.opts.empty()) std::fprintf(stderr, "    opts: %s\n", p.opts.c_str());
}

// The buffers of one launch of a program that takes its device's buffers (Program::memory): a
// storage that lives there gives its own (and is marked written when it is an output); a host
// storage (a realize of host tensors on that device: EMBER_DEVICE=opencl) a buffer of the launch,
// copied in before it (unless it has no data yet) and, for an output, out after it. Freed however
// the launch ends.
class DeviceArgs {
 public:
  DeviceArgs(runtime::Device& dev, size_t outputs) : dev_(dev), outputs_(outputs) {}
  DeviceArgs(const DeviceArgs&) = delete;
  DeviceArgs& operator=(const DeviceArgs&) = delete;
  ~DeviceArgs() {
    for (auto& t : temps_) dev_.free(t.buf);
  }

  void* handle(runtime::Storage& s, size_t slot) {
    if (slot < outputs_) outs_.push_back(&s);
    if (s.device() == &dev_) return s.device_buffer().handle;
    if (s.device())  // placement() lets no such graph through
      throw Error("internal error: a kernel on " + dev_.name() + " reads a buffer on " +
                  s.device()->name());
    for (auto& t : temps_)
      if (t.storage == &s) return t.buf.handle;
    temps_.push_back({&s, dev_.allocate(s.nbytes())});
    if (s.allocated()) {  // else nothing to copy: a new output, written by the kernel
      dev_.copy_in(temps_.back().buf, s.host_read(), s.nbytes());
      runtime::count_transfer(true);
    }
    return temps_.back().buf.handle;
  }

  // After the launch: outputs that live on the device are written there; host ones copied out.
  void finish() {
    for (runtime::Storage* s : outs_) {
      if (s->device()) {
        s->device_written();
        continue;
      }
      for (auto& t : temps_)
        if (t.storage == s) {
          dev_.copy_out(s->data(), t.buf, s->nbytes());
          runtime::count_transfer(false);
          t.storage = nullptr;  // once, however many slots name it
        }
    }
  }

 private:
  struct Temp {
    runtime::Storage* storage;
    runtime::DeviceBuffer buf;
  };
  runtime::Device& dev_;
  size_t outputs_;
  std::vector<Temp> temps_;
  std::vector<runtime::Storage*> outs_;
};

// Runs one program now on n buffers (buffer(i) gives the i-th), with DEBUG=2 / PROFILE timing.
template <class BufferAt>
void launch_on(const runtime::Program& p, size_t n, BufferAt buffer) {
  void* small[16];  // no allocation for the usual few buffers
  std::vector<void*> many(n > 16 ? n : 0);
  void** ptrs = many.empty() ? small : many.data();
  std::optional<DeviceArgs> args;
  if (p.memory) {
    args.emplace(*p.memory, p.kernel.num_outputs());
    for (size_t i = 0; i < n; i++) ptrs[i] = args->handle(*buffer(i), i);
  } else {
    for (size_t i = 0; i < n; i++) ptrs[i] = buffer(i)->data();
  }
  timed_launch(p, ptrs);
  if (args) args->finish();
}

// The steps of `list`, now, in order; slot(s) gives the storage of slot s. The loop of every
// launch: run()'s, and sync()'s for the runs it held back.
// With BEAM on, a program runs as the one its search chose (tune.h), searched here at its first
// launch, where its inputs are computed.
template <class SlotAt>
void execute(const LaunchList& list, SlotAt slot) {
  // A jit replay whose buffers live on a device may run as one graph. Host replays stop at the
  // first buffer's check, before a std::function of `slot` (an allocation per call) is made.
  if (list.graph_key && !list.steps.empty() && !list.steps.front().slots.empty() &&
      slot(list.steps.front().slots.front())->device() && launch_as_graph(list, slot))
    return;
  const bool beam = Context::get().beam > 0;
  SearchCount count;
  if (beam)
    for (const LaunchStep& s : list.steps) count.n += s.program && needs_search(*s.program);
  std::vector<void*> ptrs;
  auto release = list.releases.begin();
  for (size_t i = 0; i < list.steps.size(); i++) {
    const LaunchStep& s = list.steps[i];
    if (!s.program) {  // host or device memory, either side (storage.h)
      runtime::copy_data(*slot(s.slots[0]), *slot(s.slots[1]));
    } else {
      const runtime::Program* p = s.program.get();
      if (beam) {
        ptrs.clear();
        for (int32_t b : s.slots) ptrs.push_back(slot(b)->data());
        p = searched_program(s.program, ptrs.data(), count).get();
      }
      launch_on(*p, s.slots.size(), [&](size_t j) { return slot(s.slots[j]); });
    }
    for (; release != list.releases.end() && release->first == static_cast<int32_t>(i); ++release)
      slot(release->second)->release_data();
  }
}

void queue(const LaunchList& list, std::span<const StorageRef* const> slots) {
  Queued q{list, {}};
  q.slots.reserve(slots.size());
  for (const StorageRef* s : slots) q.slots.push_back(*s);
  Deferred& d = deferred();
  std::lock_guard<std::mutex> lock(d.mu);
  d.launches.push_back(std::move(q));
  g_queue_nonempty.store(true, std::memory_order_release);
}

size_t steps(const std::vector<Queued>& q) {
  size_t n = 0;
  for (auto& r : q) n += r.list.steps.size();
  return n;
}

}  // namespace

namespace detail {

ThreadSink& thread_sink() {
  thread_local ThreadSink s;
  return s;
}

void queue_programs(runtime::Device& dev, std::vector<std::shared_ptr<runtime::Program>> ps,
                    std::vector<std::string> keys) {
  Deferred& d = deferred();
  std::lock_guard<std::mutex> lock(d.mu);
  d.device = &dev;
  for (size_t j = 0; j < ps.size(); j++) {
    d.unbuilt.push_back(std::move(ps[j]));
    d.unbuilt_keys.push_back(std::move(keys[j]));
  }
  g_queue_nonempty.store(true, std::memory_order_release);
}

}  // namespace detail

SinkMode sink_mode() { return detail::thread_sink().mode; }
bool capturing() { return sink_mode() == SinkMode::Record; }
bool compile_only() { return sink_mode() == SinkMode::CompileOnly; }

void sync() {
  // A compile-only thread reads no value, so another thread's queue can wait for its owner.
  if (t_running_queue || compile_only() || !g_queue_nonempty.load(std::memory_order_acquire))
    return;
  Deferred& d = deferred();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.launches.empty() && d.unbuilt.empty()) return;
  t_running_queue = true;
  struct Done {
    ~Done() {
      t_running_queue = false;
      g_queue_nonempty.store(false);
    }
  } done;
  std::vector<Queued> launches = std::move(d.launches);
  auto unbuilt = std::move(d.unbuilt);
  auto keys = std::move(d.unbuilt_keys);
  d.launches.clear();
  d.unbuilt.clear();
  d.unbuilt_keys.clear();
  if (!unbuilt.empty()) {
    const auto [dt, runs] = detail::build_queued(*d.device, unbuilt, keys);
    if (Context::get().debug >= 1)
      std::fprintf(stderr,
                   "deferred launches: %zu kernels compiled as one batch in %.1f ms (%lld compiler "
                   "processes), %zu launches\n",
                   unbuilt.size(), dt * 1e3, static_cast<long long>(runs), steps(launches));
    if (Context::get().debug >= 4)
      for (auto& p : unbuilt) std::fprintf(stderr, "%s\n", p->source.c_str());
  }
  for (const Queued& q : launches)
    execute(q.list, [&](int32_t s) { return q.slots[static_cast<size_t>(s)].get(); });
}

void run(const LaunchList& list, std::span<const StorageRef* const> bound,
         std::vector<StorageRef>& fresh) {
  fresh.resize(list.fresh.size());
  for (size_t i = 0; i < list.fresh.size(); i++)
    fresh[i] = std::allocate_shared<runtime::Storage>(
        support::RecycledAlloc<runtime::Storage>{}, list.fresh[i].first, list.fresh[i].second,
        list.fresh_place.empty() ? list.place : list.fresh_place[i]);
  const int32_t nb = list.bound;
  auto slot = [&](int32_t s) -> runtime::Storage* {
    return s < nb ? bound[static_cast<size_t>(s)]->get() : fresh[static_cast<size_t>(s - nb)].get();
  };
  detail::ThreadSink& sink = detail::thread_sink();
  switch (sink.mode) {
    case SinkMode::CompileOnly:
      return;  // nothing runs in a compile-only scope
    case SinkMode::Queue:
    case SinkMode::Record: {
      // Queued and recorded launches hold their buffers: the slots as references.
      std::vector<const StorageRef*> slots(static_cast<size_t>(list.slots()));
      for (int32_t s = 0; s < list.slots(); s++)
        slots[static_cast<size_t>(s)] =
            s < nb ? bound[static_cast<size_t>(s)] : &fresh[static_cast<size_t>(s - nb)];
      if (sink.mode == SinkMode::Queue && !t_running_queue) return queue(list, slots);
      if (sink.mode == SinkMode::Record) sink.recorder->record(list, slots);
      break;
    }
    case SinkMode::Launch:
      break;
  }
  sync();  // another thread's queue: its values first
  execute(list, slot);
}

void LaunchList::release_after_last_use(const std::vector<int32_t>& kept) {
  std::vector<int32_t> last(fresh.size(), -1);
  for (size_t i = 0; i < steps.size(); i++)
    for (int32_t s : steps[i].slots)
      if (s >= bound) last[static_cast<size_t>(s - bound)] = static_cast<int32_t>(i);
  for (int32_t s : kept)
    if (s >= bound) last[static_cast<size_t>(s - bound)] = -1;
  releases.clear();
  for (size_t f = 0; f < fresh.size(); f++)
    if (last[f] >= 0) releases.push_back({last[f], fresh_slot(f)});
  std::stable_sort(releases.begin(), releases.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

void copy_storage(const StorageRef& dst, const StorageRef& src) {
  static const LaunchList copy{{LaunchStep{nullptr, {0, 1}}}, 2, {}};
  const StorageRef* bound[] = {&dst, &src};
  std::vector<StorageRef> none;
  run(copy, bound, none);
}

std::string device_label(const runtime::Device* d) { return d ? d->name() + ":0" : "cpu"; }

runtime::Device* placement(std::span<const StorageRef* const> storages) {
  if (storages.empty()) return nullptr;
  runtime::Device* first = (*storages[0])->device();
  for (const StorageRef* s : storages)
    if (runtime::Device* d = (*s)->device(); d != first)  // host memory named first
      throw ValueError(
          "Expected all tensors to be on the same device, but found at least two devices, " +
          device_label(d ? first : d) + " and " + device_label(d ? d : first) +
          "! (move one with Tensor::to)");
  return first;
}

bool one_memory(std::span<const StorageRef* const> storages) {
  for (const StorageRef* s : storages)
    if ((*s)->device() != (*storages[0])->device()) return false;
  return true;
}

DeferLaunches::DeferLaunches() {
  detail::ThreadSink& sink = detail::thread_sink();
  if (sink.mode == SinkMode::CompileOnly || sink.mode == SinkMode::Record) return;
  active_ = true;
  sink.mode = SinkMode::Queue;
  sink.defer_depth++;
}

void DeferLaunches::finish() {
  if (!active_) return;
  active_ = false;
  detail::ThreadSink& sink = detail::thread_sink();
  if (--sink.defer_depth == 0) {
    sink.mode = SinkMode::Launch;
    sync();
  }
}

DeferLaunches::~DeferLaunches() {
  try {
    finish();
  } catch (...) {
  }
}

void LaunchLog::record(const LaunchList& list, std::span<const StorageRef* const> slots) {
  if (paused && *paused) return;
  for (const LaunchStep& s : list.steps) {
    Launch l{s.program, {}};
    for (int32_t i : s.slots) l.buffers.push_back(*slots[static_cast<size_t>(i)]);
    launches.push_back(std::move(l));
  }
}

RecordLaunches::RecordLaunches(LaunchRecorder& recorder) {
  sync();  // a capture records launches that run now
  detail::ThreadSink& sink = detail::thread_sink();
  prev_mode_ = sink.mode;
  prev_recorder_ = sink.recorder;
  sink.mode = SinkMode::Record;
  sink.recorder = &recorder;
}

RecordLaunches::~RecordLaunches() {
  detail::ThreadSink& sink = detail::thread_sink();
  sink.mode = prev_mode_;
  sink.recorder = prev_recorder_;
}

}  // namespace ember::engine
