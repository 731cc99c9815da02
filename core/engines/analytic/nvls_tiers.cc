// NVLS on two tiers from its form (nvls_tiers.h).
#include "engines/analytic/nvls_tiers.h"

#include <algorithm>
#include <span>

#include "engines/analytic/book.h"
#include "engines/analytic/joins.h"
#include "engines/analytic/planes.h"
#include "engines/analytic/scin_steps.h"
#include "fabric/graph.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin {

std::size_t& nvls_tiers_templated_total() {
  static std::size_t n = 0;
  return n;
}
std::size_t& nvls_tiers_templated_reads() {
  static std::size_t n = 0;
  return n;
}
bool& nvls_tiers_check_templates() {
  static bool on = false;
  return on;
}
std::size_t& nvls_tiers_template_mismatches() {
  static std::size_t n = 0;
  return n;
}

namespace {

using Form = build::NvlsTiersForm;

bool answers(const Config& cfg) {
  return cfg.fabric.topology == Topology::TwoTier && cfg.fabric.graph_file.empty() &&
         unsupported_reason(cfg, Algorithm::Nvls).empty();
}

// A store's cost from its class's template: a store's uses are its rank's
// egress, every other rank's ingress (the same share and rate for each) and
// the trunks of its tree, which depend on its rank's leaf and the spine ECMP
// picks for its rank alone. So the stores of one part size, leaf and spine
// cost alike but for the rank's egress and the ingress it leaves out: one
// store of each class is costed in full (analytic_step_cost) and kept with
// every rank's ingress; the others copy it with their egress patched in and
// their own ingress left out, the uses in the same (resource) order, without
// listing n destinations and n routes per store (~half of NVLS's time on
// nvl576-style before). Only where the costed store has that shape (plane 0
// alone, planes alike); else every store is costed in full.
struct StoreTemplates {
  struct Key {
    std::uint64_t count;
    int leaf, spine;
    bool operator==(const Key&) const = default;
  };
  std::vector<Key> keys;
  std::vector<StepCost> costs;  // per key: the uses with every rank's ingress
  std::vector<char> usable;     // per key: the costed store had the shape above
  int find(const Key& k) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return static_cast<int>(i);
    return -1;
  }
};

// The template of rank r's store from its full cost `c`, if it has the shape
// (egress(r, 0), then ingress(x, 0) for every x != r in order with one share
// and rate, then trunks).
bool make_template(const ResourceMap& rm, int n, int r, const StepCost& c, StepCost& t) {
  const std::size_t un = static_cast<std::size_t>(n);
  if (c.uses.size() < un || c.uses[0].resource != rm.egress(r, 0) || c.uses[0].kind != ResourceKind::Egress) return false;
  const ResourceUse& in = c.uses[1];
  for (std::size_t k = 1; k < un; ++k) {
    const ResourceUse& u = c.uses[k];
    const int x = static_cast<int>(k) - 1 + (static_cast<int>(k) - 1 >= r ? 1 : 0);
    if (u.resource != rm.ingress(x, 0) || u.kind != ResourceKind::Ingress || u.amount_bytes != in.amount_bytes ||
        u.rate_GBps != in.rate_GBps || u.term != in.term || u.fed_by_transfers != in.fed_by_transfers)
      return false;
  }
  for (std::size_t k = un; k < c.uses.size(); ++k)
    if (c.uses[k].kind != ResourceKind::Uplink && c.uses[k].kind != ResourceKind::Downlink) return false;
  t = c;
  ResourceUse own = in;
  own.resource = rm.ingress(r, 0);
  t.uses.insert(t.uses.begin() + 1 + r, own);
  return true;
}

// Rank r's store cost from the template.
void from_template(const ResourceMap& rm, int r, const StepCost& t, StepCost& c) {
  c.fixed_ns = t.fixed_ns;
  c.fixed_term = t.fixed_term;
  std::copy(std::begin(t.latency_ns), std::end(t.latency_ns), std::begin(c.latency_ns));
  const auto skip = static_cast<std::ptrdiff_t>(1 + r);
  c.uses.assign(t.uses.begin(), t.uses.begin() + skip);
  c.uses.insert(c.uses.end(), t.uses.begin() + skip + 1, t.uses.end());
  c.uses[0].resource = rm.egress(r, 0);
}

// A read's cost from its class's template. A leaf ld_reduce of rank r reads
// chunk c from its leaf's m ranks (the same sources for every rank of the
// leaf) through the leaf's NVLS unit and lands at r's ingress; a spine
// ld_reduce reads r's part from the rank at r's position k in every leaf,
// over the trunks between the leaves and the spine ECMP picks for r, through
// that spine's unit, and lands at r's ingress. So the reads of one part
// (leaf or spine), span size, leaf and spine cost alike but for their
// sources' egress ports and their own ingress port: one read of each class is
// costed in full and kept with where each source's egress use and its ingress
// use sit; the others copy it with those ports patched in (no route per
// source, ~a third of a two-tier 1 GiB point at 128 GPUs before, performance.md
// section 119). The copy must keep book()'s increasing resource order, every
// resource once; where it would not, or the costed read has another shape,
// the read is costed in full.
struct ReadTemplates {
  struct Key {
    std::uint64_t count;
    int leaf, spine;
    bool spine_part;
    bool operator==(const Key&) const = default;
  };
  struct Template {
    StepCost cost;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> egress;  // (use, source j)
    std::size_t ingress = 0;                                      // its rank's ingress use
    double src_bytes = 0, dst_bytes = 0;                          // each source's region, the destination's
    bool usable = false;
  };
  std::vector<Key> keys;
  std::vector<Template> templates;
  int find(const Key& k) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return static_cast<int>(i);
    return -1;
  }
};

// Source j of rank r's leaf (spine_part false) or spine (true) ld_reduce, as
// NvlsTiersForm::fill lists them.
int read_source(const Form& f, bool spine_part, int r, int j) {
  return spine_part ? j * f.m + r % f.m : (r / f.m) * f.m + j;
}

// The template of rank r's read `st` from its full cost `c`, if it has the
// shape above: two or more sources of one region size, each source's egress
// (plane 0) once, r's ingress once, and otherwise only trunks and NVLS units.
bool make_read_template(const Schedule& s, const ResourceMap& rm, const Form& f, bool spine_part, int r,
                        const Step& st, const StepCost& c, ReadTemplates::Template& t) {
  t = ReadTemplates::Template{};
  const std::size_t sources = st.srcs.size();
  if (sources < 2 || st.dsts.size() != 1) return false;
  t.src_bytes = static_cast<double>(region_bytes(s, st.srcs[0]));
  for (const Region& x : st.srcs)
    if (static_cast<double>(region_bytes(s, x)) != t.src_bytes) return false;
  t.dst_bytes = static_cast<double>(region_bytes(s, st.dsts[0]));
  std::vector<char> seen(sources, 0);
  bool ingress = false;
  for (std::size_t k = 0; k < c.uses.size(); ++k) {
    const ResourceUse& u = c.uses[k];
    switch (u.kind) {
      case ResourceKind::Egress: {
        std::size_t j = 0;
        while (j < sources && rm.egress(read_source(f, spine_part, r, static_cast<int>(j)), 0) != u.resource) ++j;
        if (j == sources || seen[j]) return false;
        seen[j] = 1;
        t.egress.emplace_back(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(j));
        break;
      }
      case ResourceKind::Ingress:
        if (ingress || u.resource != rm.ingress(r, 0)) return false;
        ingress = true;
        t.ingress = k;
        break;
      case ResourceKind::Uplink:
      case ResourceKind::Downlink:
      case ResourceKind::NvlsReduce: break;
      default: return false;
    }
  }
  if (!ingress || t.egress.size() != sources) return false;
  t.cost = c;
  t.usable = true;
  return true;
}

// Rank r's read cost from the template; false (c unspecified) if the patched
// uses would not be in increasing resource order.
bool from_read_template(const ResourceMap& rm, const Form& f, bool spine_part, int r,
                        const ReadTemplates::Template& t, StepCost& c) {
  c = t.cost;  // (the uses' storage reused)
  for (const auto& [k, j] : t.egress) c.uses[k].resource = rm.egress(read_source(f, spine_part, r, static_cast<int>(j)), 0);
  c.uses[t.ingress].resource = rm.ingress(r, 0);
  for (std::size_t k = 1; k < c.uses.size(); ++k)
    if (!(c.uses[k - 1].resource < c.uses[k].resource)) return false;
  return true;
}

// The same cost (scin_steps::same_cost: fixed, latencies, each use's amount,
// rate and term) on the same resources.
bool same_cost(const StepCost& a, const StepCost& b) {
  if (!scin_steps::same_cost(a, b)) return false;
  for (std::size_t k = 0; k < a.uses.size(); ++k)
    if (a.uses[k].resource != b.uses[k].resource || a.uses[k].kind != b.uses[k].kind) return false;
  return true;
}

// The form's steps as book()'s view (book.h), then the two barriers' joins
// (ids size() and size() + 1: Launch steps of no cost depending on the
// barrier's arrives; its waits depend on the join alone). Costs as
// run_analytic's ScheduleView gives them (planes alike: plane 0's uses).
// While `counting`, each transfer costed adds its bytes to `lb` (book() costs
// a transfer once, when it is taken; the walk costs again with counting off);
// a store costed from a template adds its egress bytes there, and its ingress
// bytes to every rank's at the end (`stored_bytes`).
struct FormView {
  const Config& cfg;
  const Schedule& s;  // the form's buffers, no steps
  const ResourceMap& rm;
  const Form& f;
  bool one_plane;
  std::vector<StepId> arrives[2];
  StepId join_id[2];
  mutable std::vector<StepId> dep_buf;
  Step st;  // the step last costed
  bool counting = true;
  LinkBytes lb;
  StoreTemplates templates;
  ReadTemplates reads;
  double stored_bytes = 0;  // every store's bytes, counted at every rank's ingress at the end
  StepCost check;           // (nvls_tiers_check_templates: the full cost to compare,
  LinkBytes full;           //  and every transfer's bytes counted one by one)

  std::size_t size() const { return f.size() + 2; }
  std::span<const StepId> deps(std::size_t i) const {
    if (i >= f.size()) {
      const auto& a = arrives[i - f.size()];
      return {a.data(), a.size()};
    }
    const Form::Id id = f.decode(static_cast<StepId>(i));
    if (id.part == Form::Part::Wait) return {&join_id[id.barrier], 1};
    f.deps(static_cast<StepId>(i), dep_buf);
    return {dep_buf.data(), dep_buf.size()};
  }
  StepKind kind(std::size_t i) const {
    if (i >= f.size()) return StepKind::Launch;
    switch (f.decode(static_cast<StepId>(i)).part) {
      case Form::Part::Launch: return StepKind::Launch;
      case Form::Part::Arrive: return StepKind::Signal;
      case Form::Part::Wait: return StepKind::Wait;
      case Form::Part::Leaf:
      case Form::Part::Spine: return StepKind::Read;
      case Form::Part::Store: return StepKind::Write;
    }
    return StepKind::Launch;
  }
  // (nvls_tiers_check_templates: step i, costed from a template as `c`, costed in full
  // and compared; its link bytes counted one by one.)
  void check_template(StepId i, const StepCost& c) {
    if (!nvls_tiers_check_templates()) return;
    f.fill(s, i, st);
    if (!analytic_step_cost(cfg, s, rm, st, check, one_plane, false) || !same_cost(check, c))
      ++nvls_tiers_template_mismatches();
    if (counting) add_link_bytes(s, st, 1.0, full);
  }
  bool cost(StepId i, StepCost& c) {
    if (i >= f.size()) {
      analytic::no_resource_cost(c, 0.0);
      return true;
    }
    const Form::Id id = f.decode(i);
    int slot = -1;
    if (id.part == Form::Part::Store && (one_plane || s.planes == 1) && f.n > 1) {
      const StoreTemplates::Key key{f.part_span(id.rank, id.chunk).count, id.rank / f.m,
                                    ecmp_pick(id.rank, kNoNode, s.spines)};
      slot = templates.find(key);
      if (slot >= 0 && templates.usable[static_cast<std::size_t>(slot)]) {
        from_template(rm, id.rank, templates.costs[static_cast<std::size_t>(slot)], c);
        ++nvls_tiers_templated_total();
        if (counting) {
          // (add_link_bytes of a multicast store: its bytes up its rank's egress, and down every rank's ingress)
          const double b = static_cast<double>(region_bytes(s, at(f.all_sum[static_cast<std::size_t>(id.rank)],
                                                                  f.part_span(id.rank, id.chunk))));
          lb.egress_bytes[static_cast<std::size_t>(id.rank)] += b;
          stored_bytes += b;
        }
        check_template(i, c);
        return true;
      }
      if (slot < 0) {
        templates.keys.push_back(key);
        templates.costs.emplace_back();
        templates.usable.push_back(0);
        slot = static_cast<int>(templates.keys.size()) - 1;
      }
    }
    int read_slot = -1;  // a read class's first read: costed in full and made its template
    const bool spine_part = id.part == Form::Part::Spine;
    if ((id.part == Form::Part::Leaf || spine_part) && (one_plane || s.planes == 1)) {
      const ReadTemplates::Key key{spine_part ? f.part_span(id.rank, id.chunk).count : f.chunk_span(id.rank, id.chunk).count,
                                   id.rank / f.m, spine_part ? ecmp_pick(id.rank, kNoNode, s.spines) : -1, spine_part};
      if (const int found = reads.find(key); found >= 0) {
        const ReadTemplates::Template& t = reads.templates[static_cast<std::size_t>(found)];
        if (t.usable && from_read_template(rm, f, spine_part, id.rank, t, c)) {
          ++nvls_tiers_templated_total();
          ++nvls_tiers_templated_reads();
          if (counting) {
            // (add_link_bytes of a read of two or more sources: each source's bytes up its egress, the
            // destination's down the reader's ingress)
            for (const auto& e : t.egress)
              lb.egress_bytes[static_cast<std::size_t>(read_source(f, spine_part, id.rank, static_cast<int>(e.second)))] +=
                  t.src_bytes;
            lb.ingress_bytes[static_cast<std::size_t>(id.rank)] += t.dst_bytes;
          }
          check_template(i, c);
          return true;
        }
      } else {
        reads.keys.push_back(key);
        reads.templates.emplace_back();
        read_slot = static_cast<int>(reads.keys.size()) - 1;
      }
    }
    f.fill(s, i, st);
    // (Every step of the form crosses kAllPlanes from an accelerator, or is a
    // launch, signal or wait: planes alike whenever the fabric has them.)
    if (one_plane && !analytic_detail::step_planes_alike(s, st)) return false;
    if (counting && (st.kind == StepKind::Read || st.kind == StepKind::Write)) {
      add_link_bytes(s, st, 1.0, lb);
      if (nvls_tiers_check_templates()) add_link_bytes(s, st, 1.0, full);
    }
    if (!analytic_step_cost(cfg, s, rm, st, c, one_plane, false)) return false;
    if (slot >= 0) {
      const auto k = static_cast<std::size_t>(slot);
      templates.usable[k] = make_template(rm, f.n, id.rank, c, templates.costs[k]) ? 1 : 0;
    }
    if (read_slot >= 0)
      make_read_template(s, rm, f, spine_part, id.rank, st, c, reads.templates[static_cast<std::size_t>(read_slot)]);
    return true;
  }
  int resources() const { return rm.count(); }
  const std::string& name() const { return s.algorithm; }
};

}  // namespace

std::size_t nvls_tiers_steps(const Config& cfg, const Collective& c) {
  if (!answers(cfg)) return 0;
  const build::NvlsTiersCounts k = build::nvls_tiers_counts(c.bytes, cfg.fabric.gpus, cfg.fabric.leaves,
                                                             cfg.sw.nvls.tiers_max_destinations);
  return k.steps + 2;
}

std::optional<AnalyticResult> run_analytic_nvls_tiers(const Config& cfg, const Collective& coll, const RunContext& ctx) {
  if (!answers(cfg)) return std::nullopt;
  build::Builder b(cfg, info(Algorithm::Nvls).name, coll);
  b.labels = false;
  const Form f = build::nvls_tiers_form(b);
  const Schedule& s = b.s;
  const ResourceMap rm = resource_map(s);
  FormView v{cfg, s, rm, f, analytic_detail::fabric_has_planes_alike(s), {}, {}, {}, {}, true, {}, {}, {}, 0, {}, {}};
  const auto total = static_cast<StepId>(f.size());
  for (int bar = 0; bar < 2; ++bar) {
    for (int r = 0; r < f.n; ++r) v.arrives[bar].push_back(f.arrive_id(bar, r));
    v.join_id[bar] = total + static_cast<StepId>(bar);
  }
  v.lb.egress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  v.lb.ingress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  v.full = v.lb;
  // The engine's working memory, per thread; a large point's is released.
  thread_local AnalyticWorkspace ws;
  struct Release {
    ~Release() {
      if (ws.uses.size > (std::size_t{1} << 16)) ws = AnalyticWorkspace{};
    }
  } release;
  AnalyticResult res;
  if (!analytic::book(v, ctx, ws, res, false)) return std::nullopt;
  v.counting = false;
  // (The stores costed from templates: their bytes down every rank's ingress, a multicast's.)
  for (double& x : v.lb.ingress_bytes) x += v.stored_bytes;
  if (nvls_tiers_check_templates() &&
      (v.full.egress_bytes != v.lb.egress_bytes || v.full.ingress_bytes != v.lb.ingress_bytes))
    ++nvls_tiers_template_mismatches();
  analytic::walk_back(v, ws, res);
  // (The joins: out of the timings and the path.)
  res.steps.resize(f.size());
  std::erase_if(res.critical_path, [&](StepId i) { return i >= total; });
  res.max_link_bytes = v.lb.max_link_bytes();
  return res;
}

}  // namespace scin
