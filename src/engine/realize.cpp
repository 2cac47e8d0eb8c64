#include "engine/realize.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ember/context.h"
#include "ember/support/clock.h"
#include "ember/support/thread_spare.h"
#include "engine/graph_dot.h"
#include "engine/launch_sink.h"
#include "engine/overwrite.h"
#include "engine/programs.h"
#include "engine/schedule_log.h"
#include "engine/stats.h"
#include "runtime/cpu/target.h"

namespace ember::engine {

namespace {

double now() { return support::now_seconds(); }

// The storages a schedule names (schedule::BufferName: the storage's id), and the bound slots of
// its launch list: the key's storages when the graph has a key, else in order of first use.
struct Slots {
  const GraphKey* key;
  std::unordered_map<schedule::BufferName, const StorageRef*> named;
  std::unordered_map<schedule::BufferName, int32_t> slot;
  std::vector<const StorageRef*> bound;

  explicit Slots(const GraphKey* k) : key(k) {
    if (!key) return;
    for (const StorageRef* s : key->storages()) {
      slot.emplace(static_cast<schedule::BufferName>((*s)->id()),
                   static_cast<int32_t>(bound.size()));
      bound.push_back(s);
    }
  }
  schedule::BufferName name(const StorageRef& s) {
    const auto n = static_cast<schedule::BufferName>(s->id());
    named.emplace(n, &s);
    return n;
  }
  // The slot of a positive name; fresh slots come after the bound ones (resolve_fresh).
  int32_t of(schedule::BufferName n) {
    auto [it, added] = slot.emplace(n, static_cast<int32_t>(bound.size()));
    if (added) bound.push_back(named.at(n));
    return it->second;
  }
};

// The launch list of a schedule: its kernels' programs, then the copies into in-place targets.
Plan to_plan(const schedule::Schedule& sched, const ProgramBatch& progs, Slots& slots) {
  Plan p;
  // Bound slots first (fresh ones are numbered after them).
  auto mark = [&](schedule::BufferName n) { return n > 0 ? slots.of(n) : -1; };
  for (auto& item : sched.items)
    for (auto b : item.buffers) mark(b);
  for (auto& [from, to] : sched.copies) mark(from), mark(to);
  for (auto r : sched.results) mark(r);
  p.list.bound = static_cast<int32_t>(slots.bound.size());
  for (auto& b : sched.fresh) p.list.fresh.push_back({b.dtype, b.numel});
  auto slot = [&](schedule::BufferName n) {
    return n > 0 ? slots.of(n) : p.list.fresh_slot(static_cast<size_t>(-n - 1));
  };
  for (size_t i = 0; i < sched.items.size(); i++) {
    LaunchStep st{progs.programs[i], {}};
    for (auto b : sched.items[i].buffers) st.slots.push_back(slot(b));
    p.list.steps.push_back(std::move(st));
  }
  for (auto& [from, to] : sched.copies) p.list.steps.push_back({nullptr, {slot(to), slot(from)}});
  for (auto r : sched.results) p.results.push_back(slot(r));
  p.list.release_after_last_use(p.results);
  p.materialised_extra = sched.materialised_extra;
  return p;
}

void print_realize(const schedule::Schedule& sched, const ProgramBatch& progs, double t_sched,
                   bool keyed, runtime::Device& dev) {
  if (progs.missing && dev.name() == "cpu") {
    static std::once_flag target_printed;  // the target is fixed for the process: print it once
    std::call_once(target_printed, [] {
      std::fprintf(stderr, "target: %s\n", runtime::host_target().str().c_str());
    });
  }
  const SinkMode mode = sink_mode();
  char found[160];  // what the kernels the program cache lacked cost
  if (mode == SinkMode::CompileOnly || mode == SinkMode::Queue)
    std::snprintf(found, sizeof found, "%zu prepared for the %s batch", progs.missing,
                  mode == SinkMode::Queue ? "deferred" : "compile-only");
  else
    std::snprintf(found, sizeof found,
                  "%lld compiled and %lld loaded from the disk cache in %.1f ms, %lld compiler "
                  "processes",
                  static_cast<long long>(progs.missing) - static_cast<long long>(progs.from_disk),
                  static_cast<long long>(progs.from_disk), progs.seconds * 1e3,
                  static_cast<long long>(progs.compiler_runs));
  std::fprintf(stderr,
               "realize: %zu kernels (%zu cached, %s), %d extra materialised, schedule %.2f "
               "ms%s\n",
               sched.items.size(), progs.cached, found, sched.materialised_extra, t_sched * 1e3,
               keyed ? ", plan cache miss" : "");
}

// Schedules the roots and finds their programs (memory cache, else one compile batch); stores
// the plan when `key` is set and its programs are built.
// The device is that of the storages the graph reads when they live on one (placement), else
// `host_dev` (Context::device: cpu, interp, or a device that copies host buffers in and out).
Plan schedule_plan(const std::vector<Root>& roots, runtime::Device& host_dev, const GraphKey* key,
                   Slots& slots) {
  const Context& ctx = Context::get();
  const double t0 = now();
  std::vector<schedule::Root> sroots;
  for (auto& r : roots) sroots.push_back({r.node.get(), r.target ? slots.name(r.target) : 0});
  schedule::Schedule sched = schedule::create_schedule(sroots, [&](const ir::Node& n) {
    check_current(n);
    return slots.name(storage_of(n));
  });
  const double t_sched = now() - t0;
  std::vector<const StorageRef*> read;
  for (const auto& [name, storage] : slots.named) read.push_back(storage);
  runtime::Device* place = placement(read);
  runtime::Device& dev = place ? *place : host_dev;
  std::vector<schedule::Kernel> simplified;
  for (auto& item : sched.items) simplified.push_back(schedule::simplify(item.kernel));
  const ProgramBatch progs = get_programs(simplified, dev);
  if (ctx.debug >= 1) print_realize(sched, progs, t_sched, key != nullptr, dev);
  Plan p = to_plan(sched, progs, slots);
  p.list.place = place;
  // While launches are deferred or compiled only, programs (this realize's or an earlier one's,
  // found in the program cache) may not be built yet, and a failed batch build forgets them: only
  // plans made where every program is built are kept.
  const SinkMode mode = sink_mode();
  if (key && (mode == SinkMode::Launch || mode == SinkMode::Record)) store_plan(*key, p);
  if (ctx.graph) write_realize_graphs(sroots, sched, progs.programs, ctx.graph_dir);
  if (ScheduleLog* log = ScheduleLog::current()) log->record(sched, progs.programs);
  return p;
}

// In-place targets: values outside this realize that read their current data keep a copy.
void preserve_target_readers(const std::vector<Root>& roots,
                             const std::vector<const ir::Node*>& holders) {
  std::vector<StorageRef> targets;
  for (auto& r : roots)
    if (r.target && std::find(targets.begin(), targets.end(), r.target) == targets.end())
      targets.push_back(r.target);
  if (targets.empty()) return;
  std::unordered_map<const ir::Node*, long> owned;  // roots entries + holders
  for (auto& r : roots) owned[r.node.get()]++;
  for (const ir::Node* n : holders) owned[n]++;
  std::vector<std::pair<ir::NodeRef, long>> handles;
  for (auto& r : roots)
    if (owned.count(r.node.get())) {
      handles.push_back({r.node, owned[r.node.get()] + 1});  // + the handle itself
      owned.erase(r.node.get());
    }
  preserve_for_readers(targets, handles);
}

// In-place roots: the value goes into the target (through a copy when the schedule computed it
// elsewhere), and each target gets one new version.
void write_targets(const std::vector<Root>& roots, std::vector<StorageRef>& results) {
  std::unordered_set<const runtime::Storage*> written;
  for (size_t r = 0; r < roots.size(); r++) {
    const StorageRef& target = roots[r].target;
    if (!target) continue;
    if (results[r] != target) {
      copy_storage(target, results[r]);
      results[r] = target;
    }
    if (written.insert(target.get()).second) target->bump_version();
  }
}

void print_sources(const LaunchList& list) {
  for (auto& s : list.steps)
    if (s.program && !s.program->source.empty())
      std::fprintf(stderr, "%s\n", s.program->source.c_str());
}

// A realize's buffers between calls: their vectors' memory is reused by the next realize.
struct Scratch {
  std::vector<StorageRef> fresh;
  void clear() { fresh.clear(); }
};

// Roots whose values live in different memories (a loss on opencl realized with the gradients
// of cpu leaves): each memory's roots as one realize, results in the roots' order. False (nothing
// done) when they share one.
bool realize_by_memory(const std::vector<Root>& roots, const std::vector<const ir::Node*>& holders,
                       std::vector<StorageRef>& results) {
  std::vector<runtime::Device*> where;
  for (const Root& r : roots)
    where.push_back(placement_of(*r.node, r.target ? &r.target : nullptr));
  if (std::all_of(where.begin(), where.end(), [&](auto* d) { return d == where[0]; })) return false;
  results.assign(roots.size(), nullptr);
  std::vector<bool> done(roots.size(), false);
  for (size_t i = 0; i < roots.size(); i++) {
    if (done[i]) continue;
    std::vector<Root> group;
    std::vector<size_t> at;
    for (size_t j = i; j < roots.size(); j++)
      if (!done[j] && where[j] == where[i]) {
        group.push_back(roots[j]);
        at.push_back(j);
        done[j] = true;
      }
    std::vector<StorageRef> got = realize(group, holders);
    for (size_t k = 0; k < at.size(); k++) results[at[k]] = std::move(got[k]);
  }
  return true;
}

}  // namespace

runtime::Device* placement_of(const ir::Node& root, const StorageRef* target) {
  std::vector<const StorageRef*> read;
  if (target) read.push_back(target);
  std::unordered_set<const ir::Node*> seen{&root};
  std::vector<const ir::Node*> todo{&root};
  while (!todo.empty()) {
    const ir::Node* n = todo.back();
    todo.pop_back();
    if (n->op == ir::Op::BUFFER) read.push_back(&storage_of(*n));
    for (const ir::NodeRef& s : n->src)
      if (seen.insert(s.get()).second) todo.push_back(s.get());
  }
  return placement(read);
}

std::vector<StorageRef> realize(const std::vector<Root>& roots,
                                const std::vector<const ir::Node*>& holders) {
  std::vector<StorageRef> results;
  realize(roots, holders, results);
  return results;
}

void realize(const std::vector<Root>& roots, const std::vector<const ir::Node*>& holders,
             std::vector<StorageRef>& results) {
  results.clear();
  if (roots.empty()) return;
  const Context& ctx = Context::get();
  auto& stats = runtime_stats();
  stat_add(stats.realizes);
  preserve_target_readers(roots, holders);
  runtime::Device& dev = runtime::get_device(ctx.device);
  thread_local GraphKey key;
  bool cacheable = ctx.plan_cache && !ctx.graph && key.build(roots, dev.name());
  // Roots in different memories are realized apart (the check walks the roots' graphs only where
  // the key's storages are not in one memory, or there is no key).
  if (roots.size() > 1 && (!cacheable || !one_memory(key.storages())) &&
      realize_by_memory(roots, holders, results))
    return;
  // A graph of storages that live on a device runs there (its key names that device).
  if (runtime::Device* place = cacheable ? placement(key.storages()) : nullptr;
      place && place != &dev)
    cacheable = key.build(roots, place->name());
  support::ThreadSpare<Scratch> scratch;
  std::vector<StorageRef>& fresh = scratch->fresh;
  results.resize(roots.size());
  if (std::shared_ptr<const Plan> plan = cacheable ? find_plan(key) : nullptr) {
    stat_add(stats.plan_cache_hits);
    if (ctx.debug >= 1)
      std::fprintf(
          stderr, "realize: %zu kernels (plan cache hit), %d extra materialised\n",
          plan->list.steps.size() - std::count_if(plan->list.steps.begin(), plan->list.steps.end(),
                                                  [](auto& s) { return !s.program; }),
          plan->materialised_extra);
    if (ctx.debug >= 4) print_sources(plan->list);
    const std::span<const StorageRef* const> bound = key.storages();
    run(plan->list, bound, fresh);
    for (size_t r = 0; r < roots.size(); r++) {
      const int32_t s = plan->results[r];
      results[r] = s < plan->list.bound ? *bound[s] : fresh[s - plan->list.bound];
    }
    done_with_plan(key, std::move(plan));
  } else {
    if (cacheable) stat_add(stats.plan_cache_misses);
    Slots slots(cacheable ? &key : nullptr);
    const Plan p = schedule_plan(roots, dev, cacheable ? &key : nullptr, slots);
    if (ctx.debug >= 4) print_sources(p.list);
    run(p.list, slots.bound, fresh);
    for (size_t r = 0; r < roots.size(); r++) {
      const int32_t s = p.results[r];
      results[r] = s < p.list.bound ? *slots.bound[s] : fresh[s - p.list.bound];
    }
  }
  write_targets(roots, results);
}

}  // namespace ember::engine
