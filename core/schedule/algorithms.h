// All-Reduce algorithms: each compiles (config, collective) into a Schedule.
//
// One table (AlgorithmInfo) names every algorithm, says what it needs from the
// fabric, how to build it and how to describe it; every "unknown algorithm" and
// "unsupported" message comes from it. Names are strings only at the
// boundaries (CLI, JSON, database): parse them once with parse_algorithm().
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/run_context.h"
#include "fabric/config.h"
#include "schedule/schedule.h"

namespace scin {

struct Collective {
  std::uint64_t bytes = 0;   // message size per rank, S
  DType dtype = DType::Bf16;
};

/// The shipped algorithms, in display order. register_algorithm() appends
/// further ids (values past ScinInqUplink), e.g. a test's toy algorithm.
enum class Algorithm : std::uint8_t { Ring, OneShot, TwoShot, Nvls, Scin, ScinInq, RingQ8, TwoShotQ8, ScinInqUplink };

namespace build { struct Builder; }

struct AlgorithmInfo {
  Algorithm id = Algorithm::Ring;  // set by the table
  std::string name;          // CLI name: "ring", "nvls", "scin-inq", ...
  std::string description;   // one line of help
  bool quantised = false;    // moves a block-quantised payload
  /// Uses cfg.ring.protocol; Auto is resolved by simulate(), which tries each.
  bool ring_protocol = false;
  /// Empty if the fabric can run it, else why not (null: runs on any fabric).
  std::function<std::string(const Config& cfg)> unsupported;
  /// Adds the steps to b.s (buffers in/out per rank already declared).
  std::function<void(build::Builder& b)> build;
};

/// Every algorithm, in display order.
const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo& info(Algorithm a);
const AlgorithmInfo* find_algorithm(std::string_view name);
const std::string& to_string(Algorithm a);

/// Parses a name; throws Error "<field>: unknown algorithm '<name>'; allowed ring, ...".
Algorithm parse_algorithm(std::string_view name, std::string_view field = "algo");
/// The message parse_algorithm() throws, for callers that report errors themselves.
std::string unknown_algorithm_message(std::string_view name, std::string_view field = "algo");

/// Adds an algorithm to the table and returns its id. Call before any run
/// starts (the table is not locked); throws Error for a duplicate or empty name.
Algorithm register_algorithm(AlgorithmInfo a);

/// Empty if `cfg`'s fabric can run `algo`, else the reason (e.g. "nvls needs a
/// switch; mesh-8 is a switchless mesh").
std::string unsupported_reason(const Config& cfg, Algorithm algo);
std::string unsupported_reason(const Config& cfg, const std::string& algo);
/// Throws Error "<field>: <reason>" if `cfg` cannot run `algo`.
void require_supported(const Config& cfg, Algorithm algo, std::string_view field = "algo");

/// The algorithms `cfg` supports, in display order.
std::vector<std::string> supported_algorithms(const Config& cfg);

/// Compiles `algo`. For ring protocols, `cfg.ring.protocol` must not be Auto
/// here (the simulation layer tries each protocol and keeps the fastest, as
/// NCCL does). Throws Error for unknown or unsupported algorithms and bad sizes.
Schedule compile(const Config& cfg, Algorithm algo, const Collective& c);
Schedule compile(const Config& cfg, const std::string& algo, const Collective& c);
/// The same, polling `ctx`'s stop token every few thousand steps (throws
/// Cancelled): a million-step schedule takes seconds to build.
Schedule compile(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx);

/// Re-targets a schedule compiled for the ring to ring protocol `p` (not Auto):
/// the ring's steps do not depend on its protocol, only their costs do, so
/// this equals compile() with `p` without rebuilding the steps (simulate()
/// compares the protocols on one schedule). Throws Error for other algorithms.
void set_ring_protocol(Schedule& s, RingProtocol p);

/// The ring's compact form: its steps generated one at a time instead of held.
/// compile(cfg, Algorithm::Ring, c) is `head` plus, in this order, launch(r)
/// for r = 0..N-1, then for t = 0..sends()-1 (reduce-scatter for t < N-1, then
/// all-gather) and r = 0..N-1 the step send(r, t) with deps send_deps(r, t) and
/// label send_label(r, t): build_ring itself is written with these functions,
/// so the two cannot drift apart. An engine that needs only some steps (the
/// analytic engine's ranks-alike path, engines/analytic/analytic.h) generates
/// those, in O(N) memory instead of the schedule's 2N(N-1) steps.
struct RingForm {
  Schedule head;  // the compiled schedule without its steps: fabric, sizes, buffers, variant
  RingProtocol protocol = RingProtocol::Simple;
  NodeId via = kAllPlanes;                            // how a send travels (kDirect on a mesh)
  std::vector<std::uint64_t> chunk_offset, chunk_count;  // N chunks of the message, in elements
  int n() const { return head.gpus; }
  int sends() const { return 2 * (n() - 1); }  // per rank
  bool reduce_scatter(int t) const { return t < n() - 1; }
  /// The chunk rank r sends at its send t: (r - t) mod N while reducing, then (r + 1 - j) mod N.
  int chunk(int r, int t) const;
  Step launch(int r) const;                       // with its label, no deps
  Step send(int r, int t) const;                  // without deps and label
  StepId launch_id(int r) const { return r; }
  StepId send_id(int r, int t) const { return n() + t * n() + r; }
  /// {the send that last delivered to r (r-1's send t-1), r's own send t-1, r+1's launch};
  /// for t = 0 the first two are r's launch.
  std::array<StepId, 3> send_deps(int r, int t) const;
  std::string send_label(int r, int t) const;
};
/// The ring's compact form for `cfg` (a concrete ring.protocol) and `c`; the
/// same checks and errors as compile().
RingForm ring_form(const Config& cfg, const Collective& c);

/// Elements per rank of a message of `bytes` in `dtype` (bytes must be a
/// positive multiple of the element size).
std::uint64_t element_count(std::uint64_t bytes, DType dtype);
int dtype_bytes(DType t);

/// Payload ratio of a block codec against 16-bit values: (bits*G + scale_bits) / (16 G).
double payload_ratio(const QuantSpec& q);

}  // namespace scin
