// The packet engine's set-up: links, the per-step records and successor lists
// (one pass over the schedule's steps, which also checks them), and the
// per-step arrays kept per thread for its next run. Compiled in engine_unit.cc.
#include "engines/packet/engine.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "fabric/params.h"
#include "schedule/check_step.h"

namespace scin::packet {

// ------------------------------------------------------------------ set-up

void Engine::init_port_links(int g, int p) {
  Link& u = links_[static_cast<std::size_t>(g_.up(g, p))];
  u.kind = Link::Up;
  u.gpu = g;
  u.other = p;
  Link& d = links_[static_cast<std::size_t>(g_.down(g, p))];
  d.kind = Link::Down;
  d.gpu = g;
  d.other = p;
}

void Engine::build_links() {
  if (g_.star) {
    links_.resize(static_cast<std::size_t>(2 * g_.gpus * g_.planes));
    logs_ = std::vector<GroupLog>(static_cast<std::size_t>(g_.planes));
    for (int g = 0; g < g_.gpus; ++g)
      for (int p = 0; p < g_.planes; ++p) init_port_links(g, p);
  } else {
    links_.resize(static_cast<std::size_t>(g_.gpus * g_.gpus));
    for (int a = 0; a < g_.gpus; ++a)
      for (int b = 0; b < g_.gpus; ++b) {
        Link& l = links_[static_cast<std::size_t>(g_.direct(a, b))];
        l.kind = Link::Direct;
        l.gpu = a;
        l.other = b;
      }
  }
  for (auto& l : links_) l.wire.latency = to_ps(cfg_.links.latency_ns);
  timeline_.init(cfg_.packet.timeline_samples, links_.size());
  timeline_on_ = timeline_.on();
}

void Engine::setup() {
  packet_entries_ = testing::packet_entries.load(std::memory_order_relaxed);
  group_log_ = packet_entries_ && testing::group_log.load(std::memory_order_relaxed);
  fast_paths_ = testing::fast_paths.load(std::memory_order_relaxed);
  validate(cfg_);
  // The steps are checked in the pass over them below (check_step), each before it is read.
  check_schedule_nodes(s_);
  if (s_.gpus != cfg_.fabric.gpus || s_.topology != cfg_.fabric.topology ||
      (s_.topology == Topology::Star && s_.planes != cfg_.fabric.planes))
    throw Error(fmt::format("packet engine: schedule for {} accelerators / {} planes does not match the fabric "
                            "({} accelerators / {} planes)", s_.gpus, s_.planes, cfg_.fabric.gpus, cfg_.fabric.planes));
  if (s_.steps.size() > kIdMask)
    throw Error(fmt::format("packet engine: {} steps exceed the limit of {}", s_.steps.size(), kIdMask));
  g_.gpus = s_.gpus;
  g_.star = s_.topology == Topology::Star;
  tiers_ = s_.two_tier();
  g_.planes = g_.star || tiers_ ? std::max(1, s_.planes) : 1;
  g_.P = cfg_.packet.payload_bytes;
  g_.H = cfg_.packet.header_bytes;
  g_.port_cap = cfg_.packet.port_buffer_bytes;
  g_.saf = cfg_.packet.forwarding == StoreMode::StoreAndForward;
  isa_lat_ = to_ps(cfg_.links.latency_ns);
  isa_mem_ = to_ps(cfg_.accelerator.mem_latency_ns);
  isa_lat_mem_ = isa_lat_ + isa_mem_;
  isa_cap_ = cfg_.sw.isa.max_outstanding_bytes;
  lsw_ = to_ps(cfg_.sw.latency_ns);
  if (tiers_) build_tier_links();
  else build_links();
  read_issue_.assign(static_cast<std::size_t>(g_.gpus), 0);
  readers_.resize(static_cast<std::size_t>(g_.gpus));
  if (g_.star) {
    isas_.resize(static_cast<std::size_t>(g_.planes));
    for (int p = 0; p < g_.planes; ++p) {
      Isa& isa = isas_[static_cast<std::size_t>(p)];
      isa.buffer = IsaBuffer(cfg_.sw.isa.buffer_bytes);
      isa.ports.resize(static_cast<std::size_t>(g_.gpus));
      isa.reduce_res = rm_.isa_reduce(p);
      isa.inq_res = rm_.isa_inq(p);
    }
    outs_.resize(static_cast<std::size_t>(g_.planes * g_.gpus));
  }
  const std::size_t n = s_.steps.size();
  // Per step: one pass over the steps (a ring at 1024 accelerators has 2 M, each
  // a cache miss or more: its deps, sources and destinations live apart) checks
  // each (check_schedule's checks), counts predecessors and successors, finds
  // its shape and records the edges in a flat array that the successor lists
  // are then built from. Each record is written whole here (not filled first).
  {
    StepMemory& m = spare();  // (this thread's last run's storage, if any)
    steps_ = std::move(m.steps), succ_ = std::move(m.succ), edges_ = std::move(m.edges);
    steps_cap_ = std::exchange(m.steps_cap, 0), succ_cap_ = std::exchange(m.succ_cap, 0);
    m.edges.clear();
  }
  if (steps_cap_ < n + 1) {
    steps_.reset();  // (before the new one: not both at once)
    steps_.reset(new StepState[n + 1]);
    steps_cap_ = n + 1;
  }
  res_.assign(static_cast<std::size_t>(rm_.count()), Server{});
  std::vector<StepId>& edges = edges_;  // every step's dependencies, in step order (step i's: its `pending` many)
  edges.clear();
  edges.reserve(2 * n);       // most steps have one or two (pages untouched are free)
  progress_bytes_ = -1;  // not known yet (poll() adds it up when it first reports)
  delivered_bytes_ = 0;
  const int nodes = s_.node_count();
  bool any_wide = false;  // a step with kWideDeps dependencies or more (the successors' fill below)
  for (std::size_t i = 0; i < n; ++i) {
    check_step(s_, i, nodes);
    const Step& st = s_.steps[i];
    // (steps_[i].succ counts the successors of step i - 1, which are steps i and on: none counted yet)
    const std::size_t nd = st.deps.size();
    any_wide |= nd >= static_cast<std::size_t>(kWideDeps);
    steps_[i] = StepState{0, 0, static_cast<int>(nd), kNoFlow, 0, costs_.shape(st)};
    const StepId* dep = st.deps.data();
    for (std::size_t m = 0; m < nd; ++m) {
      ++steps_[dep[m] + 1].succ;
      edges.push_back(dep[m]);
    }
  }
  steps_[n] = StepState{0, 0, 0, kNoFlow, 0, StepCosts::kNone};
  if (edges.size() > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("packet engine: {} dependencies exceed the limit of 2^32", edges.size()));
  // steps_[d].succ: one past the end of d's list (the prefix sums shifted by one);
  // filled from the back (the last step's dependencies first), each list ends
  // in step order, as before, and each steps_[d].succ back at its list's start
  // (no cursor array).
  std::uint32_t end = 0;
  for (std::size_t i = 0; i < n; ++i) steps_[i].succ = end += steps_[i + 1].succ;  // (steps_[i + 1].succ: i's count)
  steps_[n].succ = end;
  if (succ_cap_ < edges.size()) {
    succ_.reset();
    succ_.reset(new StepId[edges.size()]);
    succ_cap_ = edges.size();
  }
  std::size_t k = edges.size();
  if (!any_wide || !fast_paths_) {  // (a ring's 2 M steps: the loop as it was)
    for (std::size_t i = n; i-- > 0;)
      for (int m = steps_[i].pending; m > 0; --m) succ_[--steps_[edges[--k]].succ] = static_cast<StepId>(i);
  }
  for (std::size_t i = any_wide && fast_paths_ ? n : 0; i-- > 0;) {
    const int nd = steps_[i].pending;
    if (nd >= kWideDeps) {
      // Steps a..i with one dependency list (a barrier's waits, each on every
      // arrive): each list entry's successors a..i are written together, a
      // line of its list at a time, where step by step wrote one entry in each
      // list in turn (an NVLS barrier at 1024 accelerators: 1024 lists of 4 KiB,
      // a power-of-two stride, so 1024 lines open at once in 1/64 of the cache's
      // sets and a cache miss per entry). Each list gets the same entries in
      // the same places: a..i in order, after what steps past i wrote. Not with
      // a dependency listed twice (step by step gives its list a, a, a+1, a+1 ...).
      const std::size_t ne = static_cast<std::size_t>(nd);
      const StepId* const dep = edges.data() + (k - ne);
      std::size_t a = i, ka = k - ne;  // steps a..i, their edges from ka
      while (a > 0 && steps_[a - 1].pending == nd && std::equal(dep, dep + ne, edges.data() + (ka - ne))) --a, ka -= ne;
      if (a < i && distinct(dep, ne)) {
        ++succ_blocks_;
        for (std::size_t m = ne; m-- > 0;) {
          std::uint32_t& at = steps_[dep[m]].succ;
          for (std::size_t j = i + 1; j-- > a;) succ_[--at] = static_cast<StepId>(j);
        }
        k = ka, i = a;
        continue;
      }
    }
    for (int m = nd; m > 0; --m) succ_[--steps_[edges[--k]].succ] = static_cast<StepId>(i);
  }
  shapes_.resize(costs_.shapes());
}

// True if no step appears twice in dep[0..n) (the steps' `finish` as marks:
// 0 until the run, set back to 0 here).
bool Engine::distinct(const StepId* dep, std::size_t n) {
  bool ok = true;
  std::size_t m = 0;
  for (; m < n && ok; ++m) {
    Ps& mark = steps_[dep[m]].finish;
    ok = mark == 0;
    mark = 1;
  }
  for (std::size_t j = 0; j < m; ++j) steps_[dep[j]].finish = 0;
  return ok;
}

Engine::StepMemory& Engine::spare() {
  thread_local StepMemory m;
  return m;
}

Engine::~Engine() {
  // (Here, not in run(): the event loop's code stays as it was.)
  testing::flow_shapes_kept.fetch_add(shapes_kept_, std::memory_order_relaxed);
  testing::successor_blocks.fetch_add(succ_blocks_, std::memory_order_relaxed);
  const std::size_t bytes = steps_cap_ * sizeof(StepState) + succ_cap_ * sizeof(StepId) + edges_.capacity() * sizeof(StepId);
  if (!steps_ || bytes > kSpareBytes) return;  // (never taken: the thread's spare stays)
  StepMemory& m = spare();
  m.steps = std::move(steps_), m.succ = std::move(succ_), m.edges = std::move(edges_);
  m.steps_cap = steps_cap_, m.succ_cap = succ_cap_;
}

// Progress: the bytes the network steps deliver (a write's to each destination,
// a read's result). Only progress reports need it, so it is added up when the
// first one is due (a run without a progress callback never reads every step
// for it).
double Engine::payload_to_deliver() const {
  double bytes = 0;
  for (const Step& st : s_.steps) {
    if (!is_network(st)) continue;
    if (st.kind == StepKind::Read) {
      bytes += static_cast<double>(region_bytes(s_, st.dsts[0]));
      continue;
    }
    for (const auto& d : st.dsts)
      if (s_.buffers[d.buffer].node != st.initiator) bytes += static_cast<double>(region_bytes(s_, st.srcs[0]));
  }
  return bytes;
}

}  // namespace scin::packet
