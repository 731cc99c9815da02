// Two-tier fabrics (issue 16): packets routed hop by hop over the fabric's
// links, accelerator <-> leaf and leaf <-> spine in every plane, along the
// routes the cost model books (Schedule::route: up to the first common switch,
// deterministic ECMP over spines; a multicast is one tree through one spine).
//
// Every directed link is a FIFO server (Wire) with its own rate (a trunk:
// routed::trunk_raw_GBps) and latency; it serves round-robin its own sources
// (an accelerator's or a switch's packets, lazily) and the packets it forwards
// (`transit`, by ready time). A packet's head reaches the next node one link
// latency after it starts (its tail one serialisation later; store-and-forward
// waits for the tail) and is forwarded a switch latency later. Reductions sit
// where the analytic engine books them: an ISA read in its switch (ISA reduce
// unit), an NVLS ld_reduce in the reader's leaf when every source hangs off it,
// else in a spine (NVLS unit), any other read in the reader; a group (packet i
// of every source) is reduced once it is whole, then its sum crosses to the
// reader. Requests are a latency: a source starts answering one request path
// plus its memory (or ISA operation) latency after the read starts.
//
// Switch buffers are finite: a link whose far end is a switch sends a packet
// only with credit for it in that switch's input buffer (per class, writes and
// read data), and the packet holds that room until it starts on its next link
// (a multicast's copies until the last one starts) or is reduced there. Its
// output queues are virtual, one per output link: a packet waiting for a busy
// output holds up no packet bound elsewhere, only the buffer it occupies, so
// back-pressure reaches upstream where an output stays busy (incast). Buffers
// are packet.port_buffer_bytes at an accelerator port's rate, a trunk's scaled
// with its rate (the same time's worth of data). A reduction's result holds
// no input buffer (its inputs were flow-controlled). Up-down routes make the
// buffers' dependencies acyclic: no deadlock.
//
// Not modelled on two tiers (docs/model.md): the ISA staging buffer and its
// outstanding-read window.
#include "engines/packet/engine.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "fabric/graph.h"
#include "model/routed_cost.h"

namespace scin::packet {

namespace {
bool hop_before(const Flow::Hop& x, const Flow::Hop& y) { return x.at < y.at; }
}  // namespace

// Links: accelerator up / down links numbered as on a star (Geometry::up/down),
// then per plane leaf -> spine and spine -> leaf.
int Engine::hop_link(NodeId a, NodeId b) const {
  const int ta = s_.tier(a), tb = s_.tier(b);
  if (ta == 0) return g_.up(a, s_.plane_of(b));
  if (tb == 0) return g_.down(b, s_.plane_of(a));
  const int L = s_.leaves, S = s_.spines, base = 2 * g_.gpus * g_.planes;
  if (ta == 1) return base + (s_.plane_of(a) * L + s_.leaf_of(a)) * S + s_.spine_of(b);
  return base + g_.planes * L * S + (s_.plane_of(a) * S + s_.spine_of(a)) * L + s_.leaf_of(b);
}

void Engine::build_tier_links() {
  const int L = s_.leaves, S = s_.spines;
  links_.resize(static_cast<std::size_t>(2 * g_.gpus * g_.planes + 2 * g_.planes * L * S));
  const Ps lat = to_ps(cfg_.links.latency_ns);
  const double trunk = port_raw_GBps(cfg_, s_) / routed::trunk_raw_GBps(cfg_, s_);
  for (int p = 0; p < g_.planes; ++p) {
    for (int g = 0; g < g_.gpus; ++g) {
      const NodeId leaf = s_.leaf_node(p, s_.leaf_of(g));
      init_port_links(g, p);
      links_[static_cast<std::size_t>(g_.up(g, p))].to = leaf;
      links_[static_cast<std::size_t>(g_.down(g, p))].to = g;
    }
    for (int l = 0; l < L; ++l)
      for (int k = 0; k < S; ++k) {
        const NodeId a = s_.leaf_node(p, l), b = s_.spine_node(p, k);
        for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
          Link& t = links_[static_cast<std::size_t>(hop_link(x, y))];
          t.kind = Link::Trunk;
          t.gpu = x;
          t.other = y;
          t.to = y;
          t.scale = trunk;
        }
      }
  }
  for (auto& l : links_) l.wire.latency = lat;
  timeline_.init(cfg_.packet.timeline_samples, links_.size());
  timeline_on_ = timeline_.on();
}

// Adds the links of the route a -> b in `plane` to f's hops (once each, in
// the order first added): a link's mark says whether this flow start added it.
void Engine::add_hops(Flow& f, NodeId a, NodeId b, int plane, int spine) {
  NodeId path[5];
  const int n = s_.route(a, b, plane, path, spine);
  for (int k = 0; k + 1 < n; ++k) {
    const Flow::Hop h{path[k], hop_link(path[k], path[k + 1])};
    std::uint64_t& mark = hop_mark_[static_cast<std::size_t>(h.link)];
    if (mark != hop_stamp_) f.hops.push_back(h);
    mark = hop_stamp_;
  }
}

void Engine::tier_flow_start(FlowId i) {
  Flow& f = flows_[i];
  // A fresh stamp for this flow's hops (and the hops it may hold already marked with it).
  if (hop_mark_.size() != links_.size()) hop_mark_.assign(links_.size(), 0);
  ++hop_stamp_;
  for (const auto& h : f.hops) hop_mark_[static_cast<std::size_t>(h.link)] = hop_stamp_;
  const Step& st = s_.steps[f.step];
  const int p0 = f.plane >= 0 ? f.plane : 0, np = f.plane >= 0 ? 1 : g_.planes;
  const auto stride = static_cast<std::uint32_t>(np);
  if (f.kind == FlowKind::GpuWrite || f.kind == FlowKind::IsaWrite) {
    // One tree per plane; a multicast's leaf-to-leaf branches cross one spine (ECMP on the sender).
    const int spine = f.dsts.size() > 1 ? ecmp_pick(f.initiator, kNoNode, s_.spines) : -1;
    // From an accelerator to accelerators in ascending order, each switch's links
    // follow from `dsts` (mc_next_links): a write to 575 accelerators over 18 planes
    // would hold ~10^4 hops, allocated and sorted at its start.
    // (Off with testing::fast_paths: every multicast keeps its hops.)
    f.mc_routed = fast_paths_ && !s_.is_switch(f.initiator) && f.dsts.size() > 1 && !s_.is_switch(f.dsts.back()) &&
                  std::adjacent_find(f.dsts.begin(), f.dsts.end(), std::greater_equal<>()) == f.dsts.end();
    // From an accelerator to one other node, a packet's next link is its route's (uc_routed).
    f.uc_routed = fast_paths_ && !s_.is_switch(f.initiator) && f.dsts.size() == 1 && f.dsts[0] != f.initiator;
    if (f.uc_routed) f.sink = f.dsts[0];  // (in the flow's first line: forward() reads no `dsts`)
    std::uint64_t nd = 0;
    for (NodeId d : f.dsts) {
      if (d == f.initiator) continue;
      ++nd;
      f.switch_dsts = f.switch_dsts || s_.is_switch(d);
      if (!f.mc_routed && !f.uc_routed)
        for (int p = p0; p < p0 + np; ++p) add_hops(f, f.initiator, d, p, spine);
    }
    f.expected = static_cast<std::uint64_t>(f.n) * nd;
    if (f.expected > 0)
      for (int p = p0; p < p0 + np; ++p) {
        const std::uint32_t first = g_.first_on(f, p);  // (then first + np, ...)
        const Source src{i, kAllDsts, first, f.n, stride, now_, false, 0};
        // An accelerator sends on its one link of the plane (every route in it starts there);
        // a switch's multicast may leave on several links: each carries its own copy.
        if (!s_.is_switch(f.initiator)) {
          add_link_source(g_.up(f.initiator, p), src);
          continue;
        }
        for (const auto& h : f.hops)
          if (h.at == f.initiator) add_link_source(h.link, src);
      }
  } else {
    const NodeId to = s_.buffers[st.dsts[0].buffer].node;
    f.sink = to;
    const bool nvls = st.srcs.size() > 1 && st.unit == Unit::NvlsReduce && f.kind == FlowKind::GpuRead;
    bool one_leaf = true;
    for (NodeId x : f.srcs) one_leaf = one_leaf && s_.leaf_of(x) == s_.leaf_of(to);
    f.red.assign(static_cast<std::size_t>(g_.planes), kNoNode);
    f.expected = f.n;
    f.count.assign(f.n, 0);
    f.complete.assign(f.n, 0);
    const Ps mem = to_ps(cfg_.accelerator.mem_latency_ns), op = to_ps(cfg_.sw.isa.op_latency_ns);
    for (int p = p0; p < p0 + np; ++p) {
      const NodeId red = f.kind == FlowKind::IsaRead ? f.initiator
                         : !nvls                      ? to
                         : one_leaf                   ? s_.leaf_node(p, s_.leaf_of(to))
                                                      : s_.spine_node(p, ecmp_pick(f.initiator, kNoNode, s_.spines));
      f.red[static_cast<std::size_t>(p)] = red;
    }
    for (std::size_t k = 0; k < f.srcs.size(); ++k) {
      const NodeId from = f.srcs[k];
      for (int p = p0; p < p0 + np; ++p) {
        const NodeId red = f.red[static_cast<std::size_t>(p)];
        const std::uint32_t first = g_.first_on(f, p);
        // The request crosses from the issuer to the source; the memory (or the ISA) answers.
        const routed::PathLatency req = routed::path_latency(cfg_, s_, f.initiator, from, p);
        const Ps ready = now_ + to_ps(req.total()) + (s_.is_switch(from) ? op : mem);
        if (from == red) {  // already where it is reduced
          for (std::uint32_t g = first; g < f.src_n[k]; g += stride)
            if (f.arrive(g, ready)) tier_group_complete(i, g, red, ready);
          continue;
        }
        NodeId path[5];
        s_.route(from, red, p, path);
        tier_add_response(hop_link(path[0], path[1]),
                          Source{i, static_cast<std::uint16_t>(k), first, f.src_n[k], stride, ready, true, 0});
      }
    }
  }
  // A write's next hops by node: forward() finds a packet's links by binary search
  // or, with many, through hop_first. Stable, so the links leaving one node keep
  // their order (and the run its events).
  std::stable_sort(f.hops.begin(), f.hops.end(), hop_before);
  index_hops(f);
  if (f.expected == 0 || f.n == 0) finish_flow(i, now_);
}

// Flow::hop_first for a write with many hops (sorted by node).
void Engine::index_hops(Flow& f) const {
  constexpr std::size_t kIndexFrom = 256;  // hops; fewer: a binary search of a few lines
  if (f.hops.size() < kIndexFrom) return;
  const auto parts = static_cast<std::size_t>(s_.switch_count());
  f.hop_first.resize(parts + 1);
  std::size_t k = 0;
  for (std::size_t j = 0; j < parts; ++j) {  // (an accelerator's hops first: only the initiator's)
    while (k < f.hops.size() && f.hops[k].at < g_.gpus + static_cast<NodeId>(j)) ++k;
    f.hop_first[j] = static_cast<std::uint32_t>(k);
  }
  f.hop_first[parts] = static_cast<std::uint32_t>(f.hops.size());
}

// A read source joins its first link's responses (a heap: see resp_later).
void Engine::tier_add_response(int link, const Source& src) {
  auto& list = links_[static_cast<std::size_t>(link)].tx.responses;
  const std::size_t before = list.size();
  add_link_source(link, src);
  if (list.size() == before) return;  // (nothing to send)
  const std::uint32_t sid = list.back();
  if (resp_seq_.size() <= sid) resp_seq_.resize(sources_.size());
  resp_seq_[sid] = resp_next_++;
  std::push_heap(list.begin(), list.end(), [this](std::uint32_t a, std::uint32_t b) { return resp_later(a, b); });
}

// Each link alternates between the packets it forwards and its own sources
// (round-robin between them), oldest ready first.
void Engine::hop_send(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  Sender& tx = l.tx;
  if (l.wire.busy_until > now_) {
    wake_link(id, l.wire.busy_until);
    return;
  }
  Ps earliest = kNever;
  const Ps head_t = l.transit.empty() ? kNever : held_[l.transit.front()].t;
  const bool fwd = head_t <= now_;
  if (!l.transit.empty() && !fwd) earliest = head_t;
  // Own sources: writes round-robin, then responses (oldest ready first).
  std::vector<std::uint32_t>* list = nullptr;
  std::size_t pick = 0;
  if (!tx.writes.empty()) {
    if (tx.rr >= tx.writes.size()) tx.rr = 0;
    const Ps r = sources_[tx.writes[tx.rr]].ready;
    if (r <= now_) list = &tx.writes, pick = tx.rr;
    else earliest = std::min(earliest, r);
  }
  if (list == nullptr && !tx.responses.empty()) {  // the heap's top
    const Ps r = sources_[tx.responses.front()].ready;
    if (r <= now_) list = &tx.responses;
    else earliest = std::min(earliest, r);
  }
  const bool own = list != nullptr;
  if (!fwd && !own) {
    if (earliest < kNever) wake_link(id, earliest);
    return;
  }
  bool use_fwd = fwd && (!own || !tx.last_read);
  if (s_.is_switch(l.to)) {  // credit for it in the far end's input buffer, or the other class's packet
    const std::uint64_t cap = tier_cap(l);
    const auto fits = [&](bool from_transit) {
      if (from_transit) {
        const Pkt& q = held_[l.transit.front()].p;
        return l.in.has_credit(q.cls, q.bytes + g_.H, cap);
      }
      const Source& src = sources_[(*list)[pick]];
      return l.in.has_credit(list == &tx.writes ? InputPort::kWrites : InputPort::kResponses,
                             g_.pkt_bytes(src.total, src.next) + g_.H, cap);
    };
    if (!fits(use_fwd)) {
      if (!(use_fwd ? own : fwd) || !fits(!use_fwd)) {
        tx.credit_stalled(now_);  // until a packet leaves that buffer (tier_release)
        l.in.sender_waits = true;
        if (earliest < kNever) wake_link(id, earliest);
        return;
      }
      use_fwd = !use_fwd;
    }
    tx.credit_resumed(now_, l.wire.stats.credit_stall_ps);
  }
  tx.last_read = use_fwd;
  Pkt p;
  if (use_fwd) {
    const std::uint32_t rec = l.transit.front();
    Held& held = held_[rec];
    p = held.p;
    l.transit.pop_front();
    if (--held.copies == 0) {  // its last copy: the room it held is free
      free_held_.push_back(rec);
      if (held.in != Held::kNone) tier_release(held.in, p);
    }
    // The next one is read when this link is free again, thousands of events on
    // at scale: on its way meanwhile (it was half of hop_send's time, a miss).
    if (!l.transit.empty()) __builtin_prefetch(&held_[l.transit.front()]);
  } else {
    Source& src = sources_[(*list)[pick]];
    p.flow = src.flow;
    p.index = src.next;
    p.slot = src.slot;
    p.cls = list == &tx.writes ? InputPort::kWrites : InputPort::kResponses;  // (its class on every hop)
    p.bytes = g_.pkt_bytes(src.total, src.next);
    src.next += src.stride;
    ++stats_.packets;
    if (src.next >= src.end) {
      if (list == &tx.writes) {
        list->erase(list->begin() + static_cast<std::ptrdiff_t>(pick));
      } else {
        std::pop_heap(list->begin(), list->end(), [this](std::uint32_t a, std::uint32_t b) { return resp_later(a, b); });
        list->pop_back();
      }
      --tx.own;
    } else if (list == &tx.writes) {
      ++tx.rr;
    }
  }
  const Flow& f = flows_[p.flow];
  Ps ser = 0;
  const Fine dur = l.scale == 1 ? g_.ser_fine(f, p.bytes) : to_fine(g_.ser_ns(f, p.bytes) * l.scale);
  if (s_.is_switch(l.to)) l.in.hold(p.cls, p.bytes + g_.H);
  transmit(l, static_cast<std::size_t>(id), now_, dur, p, ser);
  const bool was_empty = l.pipe.empty();
  const Ps arrive = now_ + l.wire.latency + (g_.saf ? ser : 0);
  l.pipe.push_back(Queued{p, arrive});
  // (Its time from here, not read back: the slot just written is often a line
  // not in the cache, and reading it waited for the line: half of hop_send's time.)
  if (was_empty) schedule(arrive, EvPipe, static_cast<std::uint32_t>(id));
  wake_link(id, l.wire.busy_until);
}

// The link from `at` on the route a -> b in `plane` (-1: `at` is not on it).
int Engine::route_next_link(NodeId a, NodeId b, int plane, NodeId at) const {
  NodeId path[5];
  const int n = s_.route(a, b, plane, path);
  for (int k = 0; k + 1 < n; ++k)
    if (path[k] == at) return hop_link(at, path[k + 1]);
  return -1;
}

// The link a read's packet (a source's, or the sum's: kResult) takes on from
// `at`: the next node of its route, computed again (the route the packet was
// sent on; two-shot on nvl576-style held 3*10^4 hops per read, 215 MB).
int Engine::read_next_link(const Flow& f, const Pkt& p, NodeId at) const {
  const int plane = g_.plane_of(f, p.index);
  const NodeId red = f.red[static_cast<std::size_t>(plane)];
  return p.slot == kResult ? route_next_link(red, f.sink, plane, at) : route_next_link(f.srcs[p.slot], red, plane, at);
}

// A multicast's packet (Flow::mc_routed) leaves switch `at` on the links its
// tree takes from there, in the order stored hops had (each link where the
// first destination that needs it comes in `dsts`): from the sender's leaf its
// other accelerators and, placed at the first destination off the leaf, the
// spine; from the spine the leaves with destinations; from another leaf its
// destinations. `dsts` is ascending and a leaf's accelerators are consecutive.
void Engine::mc_next_links(const Flow& f, NodeId at) {
  const int plane = s_.plane_of(at), per = s_.gpus_per_leaf(), own = s_.leaf_of(f.initiator);
  const auto first_on = [&](int leaf) {
    return static_cast<std::size_t>(std::lower_bound(f.dsts.begin(), f.dsts.end(), leaf * per) - f.dsts.begin());
  };
  if (s_.tier(at) == 2) {  // the spine: down to each leaf with destinations, but the sender's
    for (std::size_t k = 0; k < f.dsts.size();) {
      const int leaf = s_.leaf_of(f.dsts[k]);
      if (leaf != own) tier_next_.push_back(hop_link(at, s_.leaf_node(plane, leaf)));
      k = first_on(leaf + 1);
    }
    return;
  }
  const int leaf = s_.leaf_of(at);
  const std::size_t lo = first_on(leaf), hi = first_on(leaf + 1);
  const bool off = leaf == own && (lo > 0 || hi < f.dsts.size());  // destinations off the sender's leaf
  const int up = off ? hop_link(at, s_.spine_node(plane, ecmp_pick(f.initiator, kNoNode, s_.spines))) : -1;
  if (off && lo > 0) tier_next_.push_back(up);
  for (std::size_t k = lo; k < hi; ++k)
    if (f.dsts[k] != f.initiator) tier_next_.push_back(g_.down(f.dsts[k], plane));
  if (off && lo == 0) tier_next_.push_back(up);
}

// The links a packet leaves `at` on, the ones its flow takes from there (into tier_next_).
void Engine::next_links(const Flow& f, const Pkt& p, NodeId at) {
  tier_next_.clear();
  if (p.slot != kAllDsts) {  // a read's: one link
    const int id = read_next_link(f, p, at);
    if (id >= 0) tier_next_.push_back(id);
    return;
  }
  if (f.mc_routed) {
    mc_next_links(f, at);
    return;
  }
  if (f.uc_routed) {
    const int id = route_next_link(f.initiator, f.sink, g_.plane_of(f, p.index), at);
    if (id >= 0) tier_next_.push_back(id);
    return;
  }
  const Flow::Hop key{at, 0};
  auto lo = f.hops.begin(), hi = f.hops.end();
  if (!f.hop_first.empty()) {  // one switch's hops, all with the key
    const auto j = static_cast<std::size_t>(at - g_.gpus);
    hi = f.hops.begin() + f.hop_first[j + 1];
    lo = f.hops.begin() + f.hop_first[j];
  }
  const auto first = !f.hop_first.empty() ? lo : std::lower_bound(lo, hi, key, hop_before);
  for (auto it = first; it != hi && it->at == at; ++it) tier_next_.push_back(it->link);
}

// A packet leaves `at` on the links its flow takes from there, ready at `ready`,
// holding no input buffer (a reduction's result).
void Engine::forward(const Flow& f, const Pkt& p, NodeId at, Ps ready) {
  next_links(f, p, at);
  if (tier_next_.empty()) return;
  const std::uint32_t rec = hold(p, ready, Held::kNone, static_cast<std::uint32_t>(tier_next_.size()));
  for (const int id : tier_next_) transit_to(id, rec, false);
}

// Packet p gives back its room in link `in`'s far-end buffer: that link's
// sender may use the credits.
void Engine::tier_release(std::uint32_t in, const Pkt& p) {
  if (links_[in].in.unhold(p.cls, p.bytes + g_.H))
    wake_link(static_cast<int>(in), now_);
}

std::uint32_t Engine::hold(const Pkt& p, Ps ready, std::uint32_t in, std::uint32_t copies) {
  std::uint32_t rec;
  if (free_held_.empty()) {
    rec = static_cast<std::uint32_t>(held_.size());
    held_.emplace_back();
  } else {
    rec = free_held_.back();
    free_held_.pop_back();
  }
  held_[rec] = Held{p, ready, in, copies};
  return rec;
}

void Engine::transit_to(int id, std::uint32_t rec, bool now_ready) {
  Link& l = links_[static_cast<std::size_t>(id)];
  const Ps ready = held_[rec].t;
  l.transit.push_back(rec);
  if (!now_ready) l.late = true;
  if (l.late)  // (else every packet queued is ready by now + switch latency, `ready`: at the back is in order)
    for (std::size_t k = l.transit.size() - 1; k > 0 && held_[l.transit[k - 1]].t > ready; --k)
      std::swap(l.transit[k], l.transit[k - 1]);
  wake_link(id, std::max({now_, ready, l.wire.busy_until}));
}

// A packet's head (its tail, store-and-forward) reaches the link's far end:
// delivered or reduced there, or (at a switch) queued for its next links,
// holding its room in this link's far-end buffer until it starts on them.
void Engine::hop_arrive(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  const Queued h = l.pipe.front();
  l.pipe.pop_front();
  if (!l.pipe.empty()) schedule(l.pipe.front().t, EvPipe, static_cast<std::uint32_t>(id));
  const Pkt& p = h.p;
  const NodeId at = l.to;
  Flow& f = flows_[p.flow];
  // When its tail is in.
  const Ps whole = now_ + (g_.saf ? 0 : to_ps(l.scale == 1 ? g_.ser_fine(f, p.bytes)
                                                             : to_fine(g_.ser_ns(f, p.bytes) * l.scale)));
  bool onward = false;  // it leaves `at` on other links
  if (p.slot == kResult) {
    if (at == f.sink) deliver(p, whole);
    else onward = true;
  } else if (p.slot != kAllDsts) {  // a read source's packet
    const int plane = g_.plane_of(f, p.index);
    const NodeId red = f.red[static_cast<std::size_t>(plane)];
    if (at == red) {
      if (f.arrive(p.index, whole)) tier_group_complete(p.flow, p.index, red, f.complete[p.index]);
    } else {
      onward = true;
    }
  } else {
    // A write: delivered at an accelerator (always a destination) or a destination switch; on through the tree.
    if (!s_.is_switch(at) || (f.switch_dsts && std::find(f.dsts.begin(), f.dsts.end(), at) != f.dsts.end()))
      deliver(p, whole);
    onward = s_.is_switch(at);
  }
  if (!s_.is_switch(at)) return;  // (an accelerator takes every packet: no credits)
  // At a switch: in its input buffer until it starts on every next link.
  if (onward) next_links(f, p, at);
  if (!onward || tier_next_.empty()) {  // reduced or delivered here
    tier_release(static_cast<std::uint32_t>(id), p);
    return;
  }
  const std::uint32_t rec =
      hold(p, now_ + lsw_, static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(tier_next_.size()));
  for (const int next : tier_next_) transit_to(next, rec, true);
}

// Group i of a read is whole at `red`: reduce it there (the ISA's or the NVLS
// unit; in the reader, its HBM is booked with the step), then deliver the sum
// or send it on to the reader.
void Engine::tier_group_complete(FlowId fi, std::uint32_t i, NodeId red, Ps whole) {
  Flow& f = flows_[fi];
  Ps end = whole;
  if (s_.is_switch(red) && f.srcs.size() > 1) {
    const std::uint32_t src_bytes = g_.pkt_bytes(f.src_bytes[0], i);
    const double plain = f.plain_per_byte * src_bytes;
    const int sw = red - g_.gpus;
    if (f.kind == FlowKind::IsaRead) {
      if (f.reduce_inv_GBps > 0) end = res_[static_cast<std::size_t>(rm_.isa_reduce(sw))].occupy(whole, plain * f.reduce_inv_GBps);
      if (f.codec) res_[static_cast<std::size_t>(rm_.isa_inq(sw))].occupy(whole, plain * f.reduce_inv_GBps);
    } else {
      end = res_[static_cast<std::size_t>(rm_.nvls(sw))].occupy(whole, plain / cfg_.tuning.nvls_reduce_GBps);
    }
  }
  Pkt p;
  p.flow = fi;
  p.index = i;
  p.bytes = g_.pkt_bytes(f.bytes, i);
  p.slot = kResult;
  p.cls = InputPort::kResponses;
  if (red == f.sink) {
    deliver(p, end);
    return;
  }
  ++stats_.packets;
  forward(f, p, red, end + lsw_);
}

}  // namespace scin::packet
