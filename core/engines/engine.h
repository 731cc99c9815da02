// The engines behind one interface, and their registry.
//
//   analytic - critical path with alpha-beta costs and resource occupancy (fast);
//   packet   - discrete events: packets on links, in switch queues, in the ISA;
//   data     - executes a schedule on real numbers (values, not time).
//
// Every engine estimates its work before it starts (WorkEstimate), so callers
// can warn, refuse or show progress; runs take an explicit RunContext (stop
// token, progress sink). Names are strings only at the boundaries: parse them
// once with parse_engine(). A new engine: implement TimingEngine (or Engine),
// add it to the registry in engine.cc and to EngineId (docs/architecture.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/run_context.h"
#include "engines/data/data_engine.h"
#include "fabric/config.h"
#include "model/result.h"
#include "schedule/schedule.h"

namespace scin {

enum class EngineId : std::uint8_t { Analytic, Packet, Data };

/// Work an engine expects for one run, in the unit it counts progress in.
struct WorkEstimate {
  double amount = 0;      // in `unit`
  const char* unit = "";  // "steps" (analytic), "events" (packet), "elements" (data)
  /// Seconds on one core at the engine's typical rate (a rough guide for warnings).
  double seconds = 0;
  /// Peak memory of the run: its state, and (from estimate() in simulate.h) the schedule.
  double memory_bytes = 0;
  /// The packet engine's other terms of `seconds` (packet_seconds; 0 for the
  /// other engines): resource uses, steps and the schedule's width. estimate()
  /// in simulate.h extrapolates them, not the seconds, to a large fabric.
  double uses = 0, steps = 0, width = 0;
  /// The packet engine's memory of the steps that run together (each term
  /// at the depth of the schedule where it is largest; packet_held_bytes): their flows, their packets
  /// were all queued at once, and the bytes the ISA reads from each accelerator.
  /// estimate() in simulate.h extrapolates these and bounds the queues anew.
  double held_flows_bytes = 0, held_queued_bytes = 0, held_isa_bytes = 0, held_copies = 1;

  /// Adds another run's work (same unit; memory adds: the runs may overlap).
  WorkEstimate& operator+=(const WorkEstimate& o);
};

/// The packet engine's seconds on one core for a schedule of `steps` steps,
/// `uses` resource uses and `events` events (its compilation apart): per event,
/// per use (a flow's set-up) and, on a star, per step. On two tiers an event
/// costs more the more network steps are in flight (their flows, sources and
/// queues no longer fit in the caches): `width` is the most network steps at
/// one depth of the schedule (two-shot on nvl576-style: 331,200 pushes; a
/// ring: one per rank).
double packet_seconds(bool two_tier, double events, double uses, double steps, double width);

/// The packet engine's memory of the network steps that run together on
/// `cfg`'s fabric: their flows' records (`flows_bytes`), their packets as
/// queued entries (`queued_bytes`, were all queued at once) at most what the
/// switches' buffers hold, and the star ISA's requests of `isa_bytes` read from
/// each accelerator (every plane) up to switch.isa.max_outstanding_bytes a port;
/// `copies`: the most destinations of one write (a multicast's copies).
double packet_held_bytes(const Config& cfg, double flows_bytes, double queued_bytes, double isa_bytes,
                         double copies);

/// Limits on the work one command may start (the CLI's --max-work and --force,
/// the app's preview). Defaults: warn above 10 s, refuse above 5 min or above
/// the memory available now.
struct WorkBudget {
  double warn_seconds = 10;      // above: warn and show progress
  double max_seconds = 300;      // above: refuse (<= 0: no limit)
  double max_memory_bytes = 0;   // above: refuse; 0: available_memory_bytes() (base/memory.h)
  bool force = false;            // never refuse (still warn)
};

enum class BudgetVerdict : std::uint8_t { Run, Warn, Refuse };

struct BudgetCheck {
  BudgetVerdict verdict = BudgetVerdict::Run;
  /// Warn: "WHAT: about 8.4e9 events (~9 min on one core, 3.1 GB)"; Refuse: the
  /// same, the limit exceeded, and `how_to_override`.
  std::string message;
  bool refused() const { return verdict == BudgetVerdict::Refuse; }
  bool warn() const { return verdict != BudgetVerdict::Run; }
};

/// Compares `w` with `b`. `what` names the work ("scin run", "preview");
/// `how_to_override` ends a refusal (e.g. "raise --max-work SECONDS or pass --force").
BudgetCheck check_budget(const WorkEstimate& w, const WorkBudget& b, std::string_view what,
                         std::string_view how_to_override);

/// The time left that a progress line shows. From the progress once it is 5%
/// or more (`fraction` of the work done after `elapsed_s`); before, from the
/// estimate (`estimated_s`, the whole run's) while it has time left; after
/// that, unknown: early progress is no guide (steps often finish in bulk at
/// the end), and an estimate already overrun says nothing more.
struct EtaGuess {
  enum class From : std::uint8_t { Progress, Estimate, Unknown };
  From from = From::Unknown;
  double seconds = 0;  // time left (Progress, Estimate)
};
EtaGuess guess_eta(double elapsed_s, double fraction, double estimated_s);

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineId id() const = 0;
  virtual const char* name() const = 0;
  virtual const char* help() const = 0;
  /// Cheap (linear in the schedule, no simulation): what run() will cost.
  virtual WorkEstimate estimate(const Config& cfg, const Schedule& s) const = 0;
};

/// An engine that times a schedule.
class TimingEngine : public Engine {
 public:
  /// Times `s` on `cfg`; fills time, breakdown, max_link_bytes and extra (the
  /// caller fills the collective's figures). Throws Error for bad input and
  /// Cancelled once ctx.stop is requested.
  virtual SimResult run(const Config& cfg, const Schedule& s, const RunContext& ctx) const = 0;
};

/// The data engine: values, not time.
class DataEngine : public Engine {
 public:
  EngineId id() const override { return EngineId::Data; }
  const char* name() const override { return "data"; }
  const char* help() const override;
  WorkEstimate estimate(const Config& cfg, const Schedule& s) const override;
  DataResult run(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank,
                 const DataOptions& opt = {}, const RunContext& ctx = {}) const;
};

/// Every engine, in display order (analytic, packet, data).
const std::vector<const Engine*>& engines();
const Engine& engine(EngineId id);
const std::string& to_string(EngineId id);
/// Throws Error "<field>: 'data' computes values, not time; allowed analytic, packet".
const TimingEngine& timing_engine(EngineId id, std::string_view field = "engine");
const DataEngine& data_engine();

/// Parses any engine name; throws Error "<field>: '<name>' is not available; allowed ...".
EngineId parse_engine(std::string_view name, std::string_view field = "engine");
/// Parses the name of an engine that times (analytic, packet).
EngineId parse_timing_engine(std::string_view name, std::string_view field = "engine");

/// Names of the engines that time a collective ("analytic", "packet").
std::vector<std::string> engine_names();

}  // namespace scin
