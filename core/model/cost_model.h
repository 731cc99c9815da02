// The cost model both timing engines consume: what a schedule step costs on a
// fabric, independent of how an engine schedules it.
//
//   - rates: a port's raw and payload rate, the factor a transfer gets from its
//     ring protocol and from NVLS, HBM and in-switch unit rates;
//   - plain_bytes: a region as the unquantised values an ALU processes;
//   - step_cost: per step, a fixed cost paid before anything else, latencies
//     paid after the occupancy (they hold nothing, so chunks pipeline), and
//     resource uses, each an amount of bytes at an explicit rate on a typed
//     resource (a link port, a switch unit, an accelerator's HBM).
//
// The analytic engine books every use on its resource (a FCFS queue with
// backfilling); the packet engine replaces the port uses of network steps by
// packets and books the unit uses as the analytic engine does. Equations and
// sources: docs/model.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/config.h"
#include "model/result.h"
#include "schedule/schedule.h"

namespace scin {

// ------------------------------------------------------------ resources

/// What a resource is. Ports are modelled packet by packet by the packet
/// engine; units and HBM are FIFO servers in both engines.
enum class ResourceKind { Egress, Ingress, NvlsReduce, IsaReduce, IsaInq, Hbm, Uplink, Downlink };
inline bool is_port(ResourceKind k) { return k == ResourceKind::Egress || k == ResourceKind::Ingress; }

/// Resource indices for a schedule on a config (ports, units, HBM), dense from 0.
/// Units are per switch (index = node - gpus; on a star, the plane). Two-tier
/// fabrics add the leaf<->spine links (Uplink, Downlink) after the HBMs.
struct ResourceMap {
  int gpus = 0, planes = 0;
  int switches = 0;                 // switch nodes (a star: planes)
  int leaves = 0, spines = 0;       // two-tier, per plane
  Topology topology = Topology::Star;
  int egress(int gpu, int plane_or_peer) const;
  int ingress(int gpu, int plane_or_peer) const;
  int nvls(int sw) const;
  int isa_reduce(int sw) const;
  int isa_inq(int sw) const;
  int hbm(int gpu) const;
  int uplink(int plane, int leaf, int spine) const;    // leaf -> spine
  int downlink(int plane, int spine, int leaf) const;  // spine -> leaf
  int ports() const;
  int count() const;
  ResourceKind kind(int r) const;
  std::string name(int r) const;
};

ResourceMap resource_map(const Schedule& s);

/// A step holds `resource` for amount_bytes / rate_GBps.
struct ResourceUse {
  int resource = 0;
  ResourceKind kind = ResourceKind::Egress;
  double amount_bytes = 0;
  double rate_GBps = 1;
  Term term = Term::Serialisation;
  /// The unit works on the step's data as its transfers deliver it (the ISA
  /// reduces each packet group as it lands): it is busy for duration_ns() but
  /// finishes with the step's last transfer, and is free for others meanwhile.
  bool fed_by_transfers = false;
  double duration_ns() const { return amount_bytes / rate_GBps; }
};

/// Per-step cost shared by the engines: latency parts and resource use.
struct StepCost {
  double fixed_ns = 0;               // before occupancy: launch, poll, protocol overhead
  Term fixed_term = Term::Sync;
  double latency_ns[kTermCount] = {};  // after occupancy (link/switch/memory)
  std::vector<ResourceUse> uses;     // resources held for amount/rate
  /// The latency terms (bit t: Term t, in full) that pass before the data
  /// reaches a unit fed by the step's transfers (an ISA read: the request
  /// down, the memory access, the response up; not the ISA's op latency). The
  /// engines book occupancy first and the latency after it, so such a unit's
  /// work is reserved fed_lead_ns() later than the transfers' (it cannot start
  /// before its data arrives, and other work may take the unit meanwhile), and
  /// only the latency past the lead follows its end. 0: no lead.
  std::uint8_t fed_lead_terms = 0;
  /// Fed units whose data is paced to them (switch.isa.regulation = paced):
  /// the data waits in memory until the units can take it, so they start when
  /// the data has arrived *and* they are free, taken then in time order with
  /// other work (a requantise ready meanwhile goes first).
  bool fed_paced = false;
  /// The latencies summed in term order (inline: the engines call it per step).
  double latency_total_ns() const {
    double l = 0;
    for (double x : latency_ns) l += x;
    return l;
  }
  /// f(term, latency_ns) for each of fed_lead_terms, in term order.
  template <class F>
  void each_fed_lead(F f) const {
    for (int t = 0; t < kTermCount; ++t)
      if (fed_lead_terms >> t & 1) f(static_cast<Term>(t), latency_ns[t]);
  }
  /// The lead of fed units (ns): the latency_ns of fed_lead_terms, summed in term order.
  double fed_lead_ns() const {
    double l = 0;
    each_fed_lead([&l](Term, double v) { l += v; });
    return l;
  }
};

/// Adds `sign` x each of c's lead terms to `ns` (a critical-path walk passing
/// between a fed unit's use and the use it queued behind: the lead is time the
/// two overlap, fed_lead_terms).
inline void add_fed_lead(double* ns, const StepCost& c, double sign) {
  c.each_fed_lead([&](Term t, double v) { ns[static_cast<int>(t)] += sign * v; });
}

StepCost step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st);
/// The same, into `out` (reset first; its uses keep their capacity, so a caller
/// that costs many steps with one StepCost allocates once).
/// `first_plane_only`: of a transfer spread over all planes (kAllPlanes), only
/// plane 0's uses (each still a 1/planes share) and its units. For schedules
/// whose planes are alike (planes_alike(), analytic.h): the other planes'
/// resources see the same uses at the same times, so a caller that only needs
/// times books plane 0 alone.
///
/// `port_classes` (a star or two tiers; ignored on a mesh): the accelerator
/// ports of one switch plane in one direction form a class, E_p =
/// {egress(k, p)} and I_p = {ingress(k, p)} for k < gpus. A step that uses
/// every member of a class once with the same amount (an ISA read of every
/// accelerator's k-th source from accelerator k, an ISA multicast to every
/// accelerator) gets one use, on the class's representative egress(0, p) /
/// ingress(0, p), in the place of the class's first use. On two tiers a class
/// is one leaf's ports of a plane and direction, its representative the port
/// of the leaf's first accelerator: a leaf ISA's read of the same bytes from
/// each of its accelerators in order, a multicast to whole leaves in order
/// (routed::write_cost, routed::isa_read_cost). Returns false if the step uses some port
/// in any other way (a subset of a class, another order, unequal amounts, a
/// transfer issued by an accelerator): `out` is then incomplete, and the
/// caller must cost without port_classes. Always true without it.
/// When every step of a schedule passes, every member of a class sees the
/// same uses at the same times, so its queue evolves as the representative's
/// (analytic.h, ports_alike).
bool step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, StepCost& out,
               bool first_plane_only = false, bool port_classes = false);

// ------------------------------------------------------------ rates

/// The constants of ring protocol `p` (LL, LL128, Simple; Auto is not a protocol).
const RingProtocolSpec& protocol_spec(const Config& cfg, RingProtocol p);

/// Rate factor of a Write or Read: the ring protocol's bandwidth fraction for a
/// ring step, times the NVLS efficiency for NVLS traffic; 1 otherwise; times
/// the issue-15 terms below (size ramp, per-algorithm link efficiency).
double transfer_factor(const Config& cfg, const Schedule& s, const Step& st);

// ------------------------------------------------------------ issue 15: mid-size regime
// (calib area; docs/model.md "Mid-size regime"). NCCL runs fewer channels and
// smaller chunks for smaller messages, so ring (LL128/Simple) and NVLS transfers
// move at ramp_fraction(S) of their full-width rate for a message of S bytes.

/// 1 / (1 + (half_bytes / S)^exponent); 1 when the ramp is off (half_bytes = 0).
double ramp_fraction(const RampSpec& r, double message_bytes);

/// Share of the ring's channels NCCL runs for a message of S bytes on `gpus` GPUs with
/// protocol `p`: min(ring.channels, max(1, S / per-channel bytes)) / ring.channels, the
/// per-channel bytes 4096 x gpus (LL), 5120 (LL128), 32768 (Simple); 1 when ring.channels = 0.
double ring_channel_fraction(const Config& cfg, RingProtocol p, double message_bytes, int gpus);

/// Rate factor of `st` from the size ramp and the per-algorithm link
/// efficiencies (one_shot/two_shot/switch.isa .link_efficiency over links.efficiency).
double tuning_factor(const Config& cfg, const Schedule& s, const Step& st);

/// Fixed cost of a Launch step beyond accelerator.launch_overhead_ns and the
/// ring protocol base: one-/two-shot base, launches serialised by one process
/// driving several GPUs, a separate quantisation kernel; for scin-inq with
/// quant.fused the launch is a stream op instead (negative: replaces launch).
double launch_extra_ns(const Config& cfg, const Schedule& s, const Step& st);
/// Whether one process launches on several GPUs one after another
/// (accelerator.gpus_per_process > 1 with a launch_serial_ns): then
/// launch_extra_ns() differs between ranks, else every rank's is the same.
bool launches_serialised(const Config& cfg);

/// Line rate of one accelerator port: links.bandwidth_GBps split over the
/// planes of a star, or over the N-1 peers of a mesh.
double port_raw_GBps(const Config& cfg, const Schedule& s);

/// Share of a full packet that is payload: P / (P + H) (packet.payload_bytes,
/// packet.header_bytes). The ceiling of any transfer's payload efficiency.
double framing_efficiency(const Config& cfg);

/// Payload rate of one port for a transfer with rate factor `factor`:
/// raw x min(links.efficiency x factor, framing_efficiency).
double port_payload_GBps(const Config& cfg, const Schedule& s, double factor);

/// Rate at which the ISA reads one source: its port's payload rate, or
/// max_outstanding_bytes per round trip if that is lower (Little's Law).
double isa_read_GBps(const Config& cfg, const Schedule& s);

/// The ISA's read-reduce rate per plain byte (ns per byte): the reducer and,
/// for quantised data, the INQ unit dequantising in series; both are held.
double isa_reduce_ns_per_byte(const Config& cfg, bool quantised);

/// Accelerator HBM bandwidth left for a pass over memory.
double hbm_GBps(const Config& cfg);

/// Bytes per element of a collective dtype, as a double for rate arithmetic.
double dtype_bytes_of(DType t);

/// Bytes of a region as plain (unquantised) values: what an ALU processes.
double plain_bytes(const Schedule& s, const Region& r);

/// True if any source or destination of `st` is block-quantised.
bool any_codec(const Schedule& s, const Step& st);

}  // namespace scin
