// The analytic engine: critical path of a schedule with alpha-beta costs and
// link occupancy, plus a per-term breakdown that explains the number.
//
// Each step occupies the resources it uses (accelerator link ports per plane
// and direction, switch reduction / INQ units, accelerator HBM) for
// amount / rate, once its deps have finished and the resources are free.
// Latency (wire, switch traversal, memory access) is added after the
// occupancy and does not hold resources, so chunks pipeline. What a step costs
// comes from the shared cost model (model/cost_model.h).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "base/big_alloc.h"
#include "base/run_context.h"
#include "engines/analytic/paced_chains.h"
#include "fabric/config.h"
#include "model/cost_model.h"
#include "model/result.h"
#include "schedule/algorithms.h"
#include "schedule/schedule.h"

namespace scin {

struct AnalyticResult {
  double time_ns = 0;
  Breakdown breakdown;               // sums to time_ns along the critical path
  std::vector<StepTiming> steps;     // per step
  std::vector<StepId> critical_path; // first to last
  double max_link_bytes = 0;         // busiest accelerator link direction
};

/// Working memory of run_analytic. Reusable across runs (vectors keep their
/// capacity), so a caller timing several schedules in a row (simulate()'s
/// three ring protocols, a sweep's points) allocates once.
struct AnalyticWorkspace {
  struct Use { double start = 0, end = 0; StepId holder = kNoStep; int holder_use = -1; };
  /// A use record as book() keeps it: a Use without its end, which is its
  /// start plus its step's cost of that use (use_end(), book.h), found again
  /// when the critical path's walk costs the step (16 bytes, not 24: at 1024
  /// GPUs a two-tier NVLS point writes a million records, and their first
  /// touch was most of its time).
  struct UseRec { double start = 0; StepId holder = kNoStep; int holder_use = -1; };
  struct Busy { double start, end; StepId step; int use; };
  struct Queue { std::vector<Busy> v; std::size_t head = 0; };
  /// The use records (UseRec), in blocks of 128Ki (2 MiB): growing never copies them (a vector's
  /// regrowth held the old and the new array at once: at a million steps,
  /// hundreds of MB at the peak). Indices are dense from 0, as in a vector.
  /// A block is not initialised (every booking writes a record before any
  /// read of it; UseRec, an aggregate, lives in the storage as allocated):
  /// constructing 64Ki records was 12% of an NVLS point at 1024 GPUs.
  /// The first block is the C library's (a small point touches a few of its
  /// pages); the others are big_alloc's (base/big_alloc.h): on huge pages
  /// where the kernel gives them, and kept for the next large run when freed
  /// (a two-tier NVLS point at 1024 GPUs writes 18 MB of records: in 4 KiB
  /// pages their faults took as long as the rest of the point).
  struct UseList {
    static constexpr std::size_t kBlock = std::size_t{1} << 17;
    static constexpr std::size_t kBlockBytes = kBlock * sizeof(UseRec);
    struct Free {
      bool big = false;
      void operator()(UseRec* p) const {
        if (big) big_free(p, kBlockBytes);
        else ::operator delete(static_cast<void*>(p));
      }
    };
    std::vector<std::unique_ptr<UseRec[], Free>> blocks;
    std::size_t size = 0;
    void clear() { size = 0; }  // keeps the blocks for the next run
    void grow_to(std::size_t n) {
      while (blocks.size() * kBlock < n) {
        if (blocks.empty()) {
          blocks.emplace_back(static_cast<UseRec*>(::operator new(kBlockBytes)), Free{false});
          continue;
        }
        void* p = big_alloc(kBlockBytes);
        if (!p) throw std::bad_alloc();
        blocks.emplace_back(static_cast<UseRec*>(p), Free{true});
      }
      size = n;
    }
    UseRec& operator[](std::size_t i) { return blocks[i / kBlock][i % kBlock]; }
  };
  std::vector<std::uint32_t> succ_first, fill;
  std::vector<StepId> succ;
  std::vector<int> pending, bound_use;
  std::vector<std::size_t> first_use;
  UseList uses;
  std::vector<Queue> resources;
  std::vector<double> ready;
  std::vector<std::pair<double, StepId>> heap;
  /// A step booked in two events (book.h: an ISA read's fed units when its
  /// data arrives): what its first event left for the second.
  struct Waiting {
    double t0 = 0, end = 0, fed_end = 0;
    int fed_by = -1;
    bool second = false;  // its second event is queued
    StepId blocker = kNoStep;  // (paced: the reservation its units waited for)
    int blocker_use = -1;
    int probe = -1;            // (StepCost::fed_paced: its fed units, probes[probe]; -1: not paced)
    int chain = -1;            // (paced: the chain it heads, paced_chains.h)
    double stale_key = -1;     // (paced: the key of its entry queued from a probe undone; -1: none)
  };
  std::vector<Waiting> waiting;
  std::vector<analytic::FedProbe> probes;  // (paced reads' fed units, probed when taken again)
  analytic::PacedChains chains;  // (paced reads that wait in step)
  bool chain_paced = true;       // (false: every paced read queued alone, as a reference for tests)
  StepCost cost;
};

/// True if every switch plane carries the same share of every transfer (star
/// or two-tier): the port, trunk and NVLS queues of all planes then evolve
/// identically, and the engine costs plane 0 alone (step_cost's
/// first_plane_only; the same times, to the last bit). estimate() counts so too.
bool planes_alike(const Schedule& s);

/// Ports alike, a first test: a star or two tiers whose planes are not alike
/// (planes_alike) and whose transfers are all issued by switches (SCIN,
/// SCIN+INQ; on two tiers also scin-inq-uplink). Then run_analytic books each
/// class of ports (the accelerators' egress ports of one plane, or their
/// ingress ports; on two tiers those of one leaf) as its representative alone,
/// egress(0, p) or ingress(0, p) (two tiers: the leaf's first accelerator's)
/// (step_cost's port_classes): exact when every step that uses
/// a member of a class uses every member once, for the same time (each ISA
/// read takes the same bytes from every accelerator, each multicast reaches
/// every accelerator), since every member's FCFS queue then sees the same uses
/// at the same times as the representative's. That is checked step by step as
/// the steps are costed; a step that fails it (a subset, unequal sources)
/// makes run_analytic book the schedule again in full. The result is the full
/// booking's, to the last bit (time, every breakdown term, the critical path).
bool ports_alike(const Schedule& s);

/// Ranks alike (docs/model.md, "Ranks alike"): the ring's analytic result
/// without compiling its 2N(N-1) steps. `cfg.ring.protocol` must be concrete.
///
/// Exact when no resource use of the ring ever queues, which holds when
///  (a) every resource a send uses is used by one rank's sends only (each
///      rank's egress port, its successor's ingress port and HBM, and on two
///      tiers the leaf<->spine trunks a leaf-boundary rank crosses): checked
///      on the costed steps of every rank, and
///  (b) a rank's sends are a chain (each depends on the previous one) whose
///      fixed costs and latencies are >= 0, launches use no resource, and no
///      use is fed by transfers: then a send's resources are free when it
///      is ready (its previous send finished after its last use ended).
/// Then every send starts at the latest of its deps and lasts its own cost,
/// so the engine's result is a recurrence over ranks x sends, F[t][r] =
/// max(F[t-1][r-1], F[t-1][r], launch[r+1]) + cost; the steps are generated
/// from RingForm only to cost one per rank, phase and chunk size (the cost
/// of a send depends on its bytes, not on which chunk), and again along the
/// critical path. The result equals run_analytic() on the compiled ring bit
/// for bit (time, every breakdown term, the critical path, max_link_bytes;
/// with `with_steps`, every step's start and finish as well).
/// Returns nothing when (a) or (b) fails: the caller compiles and books the
/// schedule. Work O(N^2) additions and O(N) step costs; memory 8 bytes x
/// 2N(N-1) (the finish times), or with_steps the full per-step timings.
/// Without per-step timings, where the ranks repeat with a period p < N
/// (one chunk size, rank r + p's launch and sends costing what rank r's do:
/// p = 1 on a star, the GPUs a process drives where launches are serialised,
/// a leaf's ranks on two tiers), F[t][r + p] = F[t][r]: p times per step,
/// O(pN) work and memory.
std::optional<AnalyticResult> run_analytic_ring(const Config& cfg, const Collective& c, const RunContext& ctx = {},
                                                bool with_steps = false);

/// True if run_analytic_ring() answers for `cfg` and `c` (its condition holds);
/// costs O(N) steps, for estimates. `period` (optional): the period p < N
/// with which the ranks repeat (p times per step without per-step timings),
/// 1 where two chunk sizes on ranks otherwise alike are taken in closed form
/// (O(N) in all), 0 if neither.
bool ring_ranks_alike(const Config& cfg, const Collective& c, std::size_t* period = nullptr);

/// NVLS by classes of ports (docs/model.md, "Alike planes and alike ranks"):
/// the analytic result of the one-switch NVLS schedule (a star) without
/// compiling it. Its steps are generated from build_nvls's structure (N
/// launches, a barrier, per rank i and chunk c an ld_reduce L(i,c) and a
/// multimem.st S(i,c), a barrier) and costed once per chunk size.
/// The ports form two classes per plane, the accelerators' egress ports E and
/// their ingress ports I. Every L uses all of E (the same bytes from each
/// accelerator) and its own rank's ingress I_i; every S uses its own egress
/// E_i and all of I. So each member's FCFS queue holds the uses of every
/// member (L's on E, S's on I: shared uses) and the member's own uses
/// (S(m,.) on E_m, L(m,.) on I_m). The engine keeps a class's members in
/// groups whose queues are the same from the ready front on
/// (nvls_groups.h): a shared use is booked once per group, a member's own use
/// splits it from its group, and groups whose queues have become the same
/// again merge (at 1024 GPUs and 1 GiB, at most 5 groups at a time). A search
/// in a group's queue finds what it finds in each member's own queue; the
/// members the critical path visits are booked again alone for their holders.
/// Returns nothing only where the fabric or the steps' costs are not of that
/// shape (two tiers, a mesh, NVLS off): the caller compiles and books then.
/// The result equals run_analytic() on the compiled schedule bit for
/// bit (time, every breakdown term, the critical path, max_link_bytes; with
/// `with_steps`, every step's start and finish). Work O(steps x groups) plus
/// O(N) per chunk size; memory O(steps + N). nvls_alike.h: its estimate.
std::optional<AnalyticResult> run_analytic_nvls(const Config& cfg, const Collective& c, const RunContext& ctx = {},
                                                bool with_steps = false);

/// Runs `s` on `cfg`; polls ctx.stop between steps (throws Cancelled).
AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx = {});
/// The same, with the caller's working memory (results are identical).
AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx, AnalyticWorkspace& ws);
/// run_analytic() with max_link_bytes left 0, for a caller that counts the
/// links itself (a schedule whose planes stand for others: scin_tiers.cc).
AnalyticResult run_analytic_without_link_bytes(const Config& cfg, const Schedule& s, const RunContext& ctx);
/// run_analytic() without booking the long dep lists that steps share
/// through joins (joins.h): the same result to the last bit, for tests.
AnalyticResult run_analytic_unjoined(const Config& cfg, const Schedule& s);

}  // namespace scin
