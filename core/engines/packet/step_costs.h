// Step costs memoised by the step's shape (the packet engine's start_step).
//
// step_cost() and transfer_factor() are pure functions of the run's Config,
// Schedule and ResourceMap and of the step's fields other than its label, its
// dependencies and its regions' offsets (core/model reads a region's buffer
// and element count, never where in the buffer it lies). A ring at 1024
// accelerators costs 2 M steps of one packet each, of only a few shapes per
// rank (send a chunk and reduce it in, send a chunk; the last chunk may be
// shorter), and costing each was a fifth of the run. Steps of the same shape
// share one StepCost here: the same function of the same inputs, so the same
// bits. Steps with more than kMaxRegions regions (a reduction over every rank,
// a multicast) are costed directly: their shapes rarely repeat.
//
// If scin::Step gains a field, decide whether the cost may depend on it and
// add it to Key (the static_assert below is there to make that happen).
#pragma once

#include <cstdint>
#include <vector>

#include "fabric/config.h"
#include "model/cost_model.h"
#include "model/step_cost_without_ports.h"
#include "schedule/schedule.h"

namespace scin::packet {

static_assert(sizeof(Step) == 208, "scin::Step changed: review StepCosts::Key (step_costs.h)");

class StepCosts {
 public:
  static constexpr std::size_t kMaxRegions = 4;      // sources + destinations of a memoised step
  static constexpr std::size_t kMaxEntries = 1u << 16;  // distinct shapes kept (then cost directly)

  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  struct Costed {
    const StepCost* cost;  // valid until the next call
    double factor;         // transfer_factor(cfg, s, st)
  };

  /// The shape of `st`: a number below shapes(), equal for steps whose costs are
  /// surely equal; kNone if it is not memoised (too many regions, table full).
  /// `st` is a step of a checked schedule (check_schedule: its initiator is a node).
  std::uint32_t shape(const Step& st) {
    Key k;
    if (!make_key(st, k)) return kNone;
    // A step is often of the shape of its initiator's step before (a rank's
    // ring steps): no hash then.
    const auto node = static_cast<std::size_t>(static_cast<std::uint32_t>(st.initiator));
    if (node >= last_of_node_.size()) last_of_node_.resize(node + 1, kNone);
    std::uint32_t& last = last_of_node_[node];
    if (last != kNone && k == keys_[last]) return last;
    const std::uint32_t id = find_or_add(k);
    if (id != kNone) last = id;
    return id;
  }
  /// The cost of a step `st` of shape `id` (< shapes()), costed from `st` the first time.
  Costed cost(std::uint32_t id, const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st) {
    Entry& x = entries_[id];
    if (!x.costed) {
      step_cost(cfg, s, rm, st, x.cost);
      x.factor = transfer_factor(cfg, s, st);
      x.costed = true;
      ++misses_;
    } else {
      ++hits_;
    }
    return {&x.cost, x.factor};
  }
  /// The cost of `st`, not memoised.
  Costed direct(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st) {
    step_cost(cfg, s, rm, st, scratch_);
    return {&scratch_, transfer_factor(cfg, s, st)};
  }
  /// The same without the accelerator ports' uses (step_cost_without_ports):
  /// for a step that crosses the fabric, whose ports the packets model.
  Costed direct_without_ports(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st) {
    step_cost_without_ports(cfg, s, rm, st, scratch_);
    return {&scratch_, transfer_factor(cfg, s, st)};
  }
  /// The cost of `st` and its transfer factor, as step_cost() and transfer_factor() give them.
  Costed get(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st) {
    const std::uint32_t id = shape(st);
    return id == kNone ? direct(cfg, s, rm, st) : cost(id, cfg, s, rm, st);
  }

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }
  std::size_t shapes() const { return entries_.size(); }

 private:
  // What a step's cost may depend on: every field of Step but label, deps and
  // the regions' offsets, packed in words (the first n words).
  struct Key {
    std::uint32_t n = 0;  // words used (w[1] holds the region counts, so equal n before equal words)
    std::uint64_t w[4 + 2 * kMaxRegions];
    bool operator==(const Key& o) const {
      if (n != o.n) return false;
      for (std::uint32_t j = 0; j < n; ++j)
        if (w[j] != o.w[j]) return false;
      return true;
    }
    std::uint64_t hash() const {
      std::uint64_t h = 0x9e3779b97f4a7c15ull;
      for (std::uint32_t j = 0; j < n; ++j) h = (h ^ w[j]) * 0xff51afd7ed558ccdull;
      h ^= h >> 33;  // (the product carries low bits up only: fold the high ones down)
      h *= 0xc4ceb9fe1a85ec53ull;
      return h ^ h >> 33;
    }
  };
  static std::uint64_t u(NodeId n) { return static_cast<std::uint32_t>(n); }
  template <class E>
  static std::uint64_t e(E x) { return static_cast<std::uint64_t>(static_cast<std::uint16_t>(x)); }
  static bool make_key(const Step& st, Key& k) {
    const std::size_t ns = st.srcs.size(), nd = st.dsts.size();
    if (ns + nd > kMaxRegions) return false;
    k.w[0] = e(st.kind) | e(st.op) << 16 | e(st.unit) << 32 | e(st.protocol) << 48;
    k.w[1] = e(st.accum) | std::uint64_t{st.accumulate} << 16 | std::uint64_t{st.ring_step} << 17 |
             static_cast<std::uint64_t>(ns) << 32 | static_cast<std::uint64_t>(nd) << 48;
    k.w[2] = u(st.initiator) | u(st.target) << 32;
    k.w[3] = u(st.via);
    // (On the lists' data pointers: each InlineVec access tests inline or heap.)
    std::size_t j = 4;
    const Region* r = st.srcs.data();
    for (std::size_t m = 0; m < ns; ++m, j += 2) k.w[j] = r[m].buffer, k.w[j + 1] = r[m].count;
    r = st.dsts.data();
    for (std::size_t m = 0; m < nd; ++m, j += 2) k.w[j] = r[m].buffer, k.w[j + 1] = r[m].count;
    k.n = static_cast<std::uint32_t>(j);
    return true;
  }
  std::uint32_t find_or_add(const Key& k) {
    if (slots_.empty()) slots_.assign(1024, kEmpty);
    const std::uint64_t h = k.hash();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const std::uint32_t e = slots_[i];
      if (e == kEmpty) {
        if (entries_.size() >= kMaxEntries) return kNone;
        entries_.emplace_back();
        keys_.push_back(k);
        slots_[i] = static_cast<std::uint32_t>(entries_.size() - 1);
        if (2 * entries_.size() > slots_.size()) grow();
        return static_cast<std::uint32_t>(entries_.size() - 1);
      }
      if (keys_[e] == k) return e;
    }
  }
  void grow() {
    std::vector<std::uint32_t> t(2 * slots_.size(), kEmpty);
    const std::size_t mask = t.size() - 1;
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      std::size_t i = keys_[e].hash() & mask;
      while (t[i] != kEmpty) i = (i + 1) & mask;
      t[i] = static_cast<std::uint32_t>(e);
    }
    slots_.swap(t);
  }

  struct Entry {
    bool costed = false;
    double factor = 1;
    StepCost cost;
  };
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  std::vector<Key> keys_;             // by shape (apart from the costs: set-up compares keys only)
  std::vector<Entry> entries_;        // by shape (a StepCost's uses live on the heap: growing moves no use)
  std::vector<std::uint32_t> slots_;  // open addressing, at most half full
  StepCost scratch_;                  // steps not memoised
  std::vector<std::uint32_t> last_of_node_;  // per initiator: the shape of its last step asked for
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace scin::packet
