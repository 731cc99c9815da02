#include "engines/engine.h"

#include <cmath>
#include <fmt/format.h>

#include "base/error.h"
#include "engines/analytic/analytic.h"
#include "engines/packet/packet_engine.h"
#include "model/cost_model.h"

namespace scin {
namespace {

class AnalyticEngine final : public TimingEngine {
 public:
  EngineId id() const override { return EngineId::Analytic; }
  const char* name() const override { return "analytic"; }
  const char* help() const override {
    return "critical path with alpha-beta costs and resource occupancy (microseconds to milliseconds)";
  }
  // Work: one heap operation and a gap search per step and per resource use.
  WorkEstimate estimate(const Config& cfg, const Schedule& s) const override {
    const ResourceMap rm = resource_map(s);
    double uses = 0;
    for (const auto& st : s.steps) uses += static_cast<double>(step_cost(cfg, s, rm, st).uses.size());
    const double steps = static_cast<double>(s.steps.size());
    return {steps, "steps", (steps + uses) * 1e-7};
  }
  SimResult run(const Config& cfg, const Schedule& s, const RunContext& ctx) const override {
    AnalyticResult a = run_analytic(cfg, s, ctx);
    SimResult r;
    r.engine = name();
    r.time_ns = a.time_ns;
    r.breakdown = a.breakdown;
    r.max_link_bytes = a.max_link_bytes;
    return r;
  }
};

class PacketEngine final : public TimingEngine {
 public:
  EngineId id() const override { return EngineId::Packet; }
  const char* name() const override { return "packet"; }
  const char* help() const override {
    return "discrete events: packets on links, in switch queues, the NVLS reducer and the ISA (seconds at GiB sizes)";
  }
  // Work: about one event per packet per link it crosses. Every port use of a
  // step is a stream of packets of packet.payload_bytes; non-network steps are
  // one event each.
  WorkEstimate estimate(const Config& cfg, const Schedule& s) const override {
    const ResourceMap rm = resource_map(s);
    const double payload = static_cast<double>(std::max<std::uint64_t>(1, cfg.packet.payload_bytes));
    double events = 0;
    for (const auto& st : s.steps) {
      events += 1;
      for (const auto& u : step_cost(cfg, s, rm, st).uses)
        if (is_port(u.kind)) events += std::ceil(u.amount_bytes / payload);
    }
    return {events, "events", events / 1.5e7};
  }
  SimResult run(const Config& cfg, const Schedule& s, const RunContext& ctx) const override {
    return run_packet_sim(cfg, s, ctx);
  }
};

const AnalyticEngine kAnalytic;
const PacketEngine kPacket;
const DataEngine kData;

}  // namespace

const char* DataEngine::help() const {
  return "executes the schedule on real numbers: values and quantisation error, not time";
}

WorkEstimate DataEngine::estimate(const Config&, const Schedule& s) const {
  double elems = 0;
  for (const auto& st : s.steps) {
    const double k = static_cast<double>(st.srcs.size() + st.dsts.size());
    if (!st.dsts.empty()) elems += k * static_cast<double>(st.dsts[0].count);
  }
  return {elems, "elements", elems / 2e8};
}

DataResult DataEngine::run(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank,
                           const DataOptions& opt, const RunContext& ctx) const {
  return run_data(s, inputs_per_rank, opt, ctx);
}

const std::vector<const Engine*>& engines() {
  static const std::vector<const Engine*> all = {&kAnalytic, &kPacket, &kData};
  return all;
}

const Engine& engine(EngineId id) {
  for (const Engine* e : engines())
    if (e->id() == id) return *e;
  throw Error(fmt::format("engine: no engine with id {}", static_cast<int>(id)));
}

const std::string& to_string(EngineId id) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Engine* e : engines()) v.emplace_back(e->name());
    return v;
  }();
  return names.at(static_cast<std::size_t>(id));
}

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const Engine* e : engines())
    if (dynamic_cast<const TimingEngine*>(e)) out.emplace_back(e->name());
  return out;
}

const TimingEngine& timing_engine(EngineId id, std::string_view field) {
  const Engine& e = engine(id);
  if (const auto* t = dynamic_cast<const TimingEngine*>(&e)) return *t;
  throw Error(fmt::format("{}: '{}' computes values, not time; allowed {}", field, e.name(),
                          fmt::join(engine_names(), ", ")));
}

const DataEngine& data_engine() { return kData; }

EngineId parse_engine(std::string_view name, std::string_view field) {
  std::vector<std::string_view> names;
  for (const Engine* e : engines()) {
    if (name == e->name()) return e->id();
    names.emplace_back(e->name());
  }
  throw Error(fmt::format("{}: '{}' is not available; allowed {}", field, name, fmt::join(names, ", ")));
}

EngineId parse_timing_engine(std::string_view name, std::string_view field) {
  for (const Engine* e : engines())
    if (name == e->name() && dynamic_cast<const TimingEngine*>(e)) return e->id();
  if (name == "data") timing_engine(EngineId::Data, field);  // throws the explanation
  throw Error(fmt::format("{}: '{}' is not available; allowed {}", field, name, fmt::join(engine_names(), ", ")));
}

}  // namespace scin
