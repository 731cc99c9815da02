// What a run reports: the step timings' critical-path breakdown, the busiest
// accelerator link direction and the typed statistics (SimResult.extra is
// their JSON).
#include "engines/packet/engine.h"

#include <fmt/format.h>

namespace scin::packet {

// Critical path through the steps (each step made ready by its latest dep).
// A step's own duration is split across terms in the proportions of its
// analytic cost (fixed part first); queueing inflates those terms pro rata.
void Engine::breakdown(Run& out) const {
  Breakdown& b = out.result.breakdown;
  const auto& timing = out.steps;
  if (timing.empty()) return;
  StepId cur = 0;
  for (StepId i = 0; i < timing.size(); ++i)
    if (steps_[i].finish > steps_[cur].finish) cur = i;
  while (cur != kNoStep) {
    const StepCost c = step_cost(cfg_, s_, rm_, s_.steps[cur]);  // only the steps on the path
    const double dur = timing[cur].finish_ns - timing[cur].start_ns;
    const double fixed = std::min(dur, c.fixed_ns);
    b[c.fixed_term] += fixed;
    const double rest = dur - fixed;
    double occ = 0;
    Term occ_term = Term::Serialisation;
    for (const auto& u : c.uses)
      if (u.amount_bytes / u.rate_GBps > occ) {
        occ = u.amount_bytes / u.rate_GBps;
        occ_term = u.term;
      }
    double a = occ;
    for (double x : c.latency_ns) a += x;
    if (a > 0) {
      b[occ_term] += rest * occ / a;
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) b.ns[t] += rest * c.latency_ns[t] / a;
    } else {
      b[Term::Serialisation] += rest;
    }
    StepId next = kNoStep;
    Ps best = -1;
    for (StepId d : s_.steps[cur].deps)
      if (steps_[d].finish > best) {
        best = steps_[d].finish;
        next = d;
      }
    cur = next;
  }
}

namespace {

std::string link_name(const Link& l) {
  switch (l.kind) {
    case Link::Up: return fmt::format("r{}->sw{}", l.gpu, l.other);
    case Link::Down: return fmt::format("sw{}->r{}", l.other, l.gpu);
    case Link::Direct: break;
    case Link::Trunk: return fmt::format("sw{}->sw{}", l.gpu, l.other);
  }
  return fmt::format("r{}->r{}", l.gpu, l.other);
}

}  // namespace

void Engine::report(Run& out, Ps total) const {
  SimResult& r = out.result;
  r.engine = "packet";
  r.time_ns = to_ns(total);
  // Busiest accelerator link direction, in payload bytes.
  std::vector<double> eg(static_cast<std::size_t>(g_.gpus), 0.0), in(static_cast<std::size_t>(g_.gpus), 0.0);
  for (const auto& l : links_) {
    const auto b = static_cast<double>(l.wire.stats.payload_bytes);
    if (l.kind == Link::Up) eg[static_cast<std::size_t>(l.gpu)] += b;
    if (l.kind == Link::Down) in[static_cast<std::size_t>(l.gpu)] += b;
    if (l.kind == Link::Direct) {
      eg[static_cast<std::size_t>(l.gpu)] += b;
      in[static_cast<std::size_t>(l.other)] += b;
    }
  }
  for (std::size_t g = 0; g < eg.size(); ++g) r.max_link_bytes = std::max({r.max_link_bytes, eg[g], in[g]});
  breakdown(out);

  Stats& st = out.stats;
  st = stats_;
  st.packet_payload_bytes = g_.P;
  st.packet_header_bytes = g_.H;
  const bool tl = timeline_.on();
  const int used = tl ? timeline_.used(total) : 0;
  if (tl) {
    st.timeline.bin_ns = to_ns(timeline_.bin());
    st.timeline.samples = used;
  }
  for (std::size_t k = 0; k < links_.size(); ++k) {
    const Link& l = links_[k];
    if (l.kind == Link::Direct && l.gpu == l.other) continue;
    LinkReport x;
    x.name = link_name(l);
    x.direction = l.kind == Link::Up      ? LinkReport::Direction::Egress
                  : l.kind == Link::Down  ? LinkReport::Direction::Ingress
                  : l.kind == Link::Trunk ? LinkReport::Direction::Trunk
                                          : LinkReport::Direction::Direct;
    x.gpu = l.gpu;
    x.plane_or_peer = l.other;
    x.payload_bytes = l.wire.stats.payload_bytes;
    x.wire_bytes = l.wire.stats.wire_bytes;
    x.packets = l.wire.stats.packets;
    x.busy_ns = to_ns(l.wire.stats.busy_ps);
    x.utilisation = total > 0 ? static_cast<double>(l.wire.stats.busy_ps) / static_cast<double>(total) : 0.0;
    x.credit_stall_ns = to_ns(l.wire.stats.credit_stall_ps);
    if (l.kind == Link::Up)
      st.switch_ports.push_back(
          PortReport{fmt::format("sw{} in r{}", l.other, l.gpu), l.other, l.gpu, true, l.in.peak_bytes()});
    if (l.kind == Link::Down && !tiers_)  // (two tiers: output queues' peaks not kept, docs/model.md)
      st.switch_ports.push_back(
          PortReport{fmt::format("sw{} out r{}", l.other, l.gpu), l.other, l.gpu, false, l.out.peak_bytes()});
    if (l.kind == Link::Trunk)  // two tiers: the input port at a leaf-spine link's far end (gpu -1)
      st.switch_ports.push_back(
          PortReport{fmt::format("sw{} in from sw{}", l.other, l.gpu), s_.plane_of(l.gpu), -1, true, l.in.peak_bytes()});
    if (tl) {
      std::vector<double> u(static_cast<std::size_t>(used));
      for (int b = 0; b < used; ++b) u[static_cast<std::size_t>(b)] = timeline_.utilisation(k, b);
      st.timeline.links.push_back(x.name);
      st.timeline.utilisation.push_back(std::move(u));
    }
    st.links.push_back(std::move(x));
  }
  for (std::size_t p = 0; p < isas_.size(); ++p)
    st.isa.push_back(IsaReport{static_cast<int>(p), isas_[p].buffer.capacity(), isas_[p].buffer.high_water_mark()});
  r.extra = to_json(st);
}

}  // namespace scin::packet
