// The fabric and algorithm parameters a simulation runs on.
//
// Every field here is declared once more, with its dotted path, unit, range,
// default and help, in the parameter registry (params.cc). The registry — not
// this struct — is what the CLI (`--set`), presets, sweeps, the database and
// the GUI talk to, so a new field must be added in both places (a test checks
// that every registry entry round-trips through a preset).
#pragma once

#include <cstdint>
#include <string>

namespace scin {

enum class Topology { Star, Mesh, TwoTier };
enum class Regulation { None, Paced };
enum class ScaleFormat { Fp16, Bf16, Fp32 };
enum class RingProtocol { Auto, LL, LL128, Simple };
/// The fixed ring protocols as `ring.protocol` spells them, in RingProtocol's (and NCCL's) order:
/// LL, LL128, Simple. Measured rows name the ring with one of them fixed "ring-" + key.
inline constexpr const char* kRingProtocolKeys[] = {"ll", "ll128", "simple"};
enum class Codec { Int8, Int4, Fp8E4M3, Fp8E5M2 };
enum class StoreMode { CutThrough, StoreAndForward };

struct AcceleratorSpec {
  std::string name = "H200";
  double hbm_bandwidth_GBps = 4800;
  double hbm_efficiency = 0.8;           // achievable fraction for streaming kernels
  double launch_overhead_ns = 2500;      // kernel launch + entry, paid by kernel-based collectives
  double sync_overhead_ns = 500;         // stream memory op (write/wait value) used by SCIN's Arrive/Wait
  double flag_poll_ns = 100;             // one poll of a local flag
  double mem_latency_ns = 400;           // HBM access latency seen by a remote read
  double peak_bf16_TFLOPS = 989;         // dense BF16 tensor throughput (inference model)
  double compute_efficiency = 0.7;       // achievable fraction of peak for large GEMMs
};

struct LinkSpec {
  double bandwidth_GBps = 450;           // per accelerator, per direction, all planes together
  double latency_ns = 100;               // one traversal accelerator<->switch (PHY + wire)
  double efficiency = 0.82;              // protocol efficiency (headers, flow control)
};

struct NvlsSpec {
  bool enabled = true;                   // multimem.ld_reduce / multimem.st in the switch
  double efficiency = 0.85;              // NCCL's Hopper NVLS efficiency on top of link efficiency
  double sync_overhead_ns = 8500;        // per NVLS barrier: fences + multimem.red + poll (calibrated)
  int nccl_min_gpus = 3;                 // NCCL runs NVLS from 3 GPUs (ncclNvlsInit: off for <= 2)
  /// Two tiers: the most multicast destinations (ranks x stores) the NVLS schedule
  /// may hold; above it the chunks are fewer and larger than NCCL's (a simulation
  /// limit of time and memory, not a property of the switch).
  int tiers_max_destinations = 2'000'000;
};

struct IsaSpec {
  bool enabled = false;                  // in-switch accelerator (SCIN)
  double reduce_GBps = 7200;             // reduction throughput, input bytes per second
  double op_latency_ns = 50;             // ISA instruction issue / counter poll
  std::uint64_t buffer_bytes = 8ull << 20;
  std::uint64_t max_outstanding_bytes = 1ull << 20;  // per accelerator port
  int waves = 16;
  Regulation regulation = Regulation::Paced;
  bool inq = false;                      // INQ unit present
  double inq_GBps = 7200;                // INQ (de)quantisation throughput, FP input bytes per second
};

struct SwitchSpec {
  double latency_ns = 200;               // port-to-port traversal
  int ports = 1024;                      // radix: fabric ports per switch (one per attached accelerator or uplink bundle member)
  bool multicast = true;
  NvlsSpec nvls;
  IsaSpec isa;
};

struct PacketSpec {
  std::uint64_t payload_bytes = 256;
  std::uint64_t header_bytes = 16;
  std::uint64_t port_buffer_bytes = 64 << 10;   // per switch output port queue
  StoreMode forwarding = StoreMode::CutThrough;
  int timeline_samples = 0;                     // packet engine: per-link utilisation samples (0 = off)
};

struct RingProtocolSpec {
  double base_ns;                        // fixed cost on top of the kernel launch
  double step_overhead_ns;               // per ring step, on top of the path latency
  double bandwidth_fraction;             // share of the link carrying payload
};

struct RingSpec {
  RingProtocol protocol = RingProtocol::Auto;
  RingProtocolSpec ll{4100, 150, 0.5};
  RingProtocolSpec ll128{11500, 1450, 0.9375};
  RingProtocolSpec simple{5900, 2950, 1.0};
  double channels = 0;                   // NCCL's ring channels (comm->nChannels); 0: all at every size
};

struct QuantSpec {
  int block_elems = 32;                  // G, values per scale
  ScaleFormat scale_format = ScaleFormat::Fp16;
  Codec codec = Codec::Int8;
};

// --- issue 15 (calib area): NCCL's mid-size ramp, how a measurement drove the
// GPUs, symmetric-kernel costs, and the knobs that reproduce the seed paper's
// assumptions. Defaults leave the model as it was; presets set calibrated values.
struct RampSpec {
  double half_bytes = 0;                 // message size at which the bandwidth term runs at half rate (0: no ramp)
  double exponent = 1;                   // steepness: fraction = 1 / (1 + (half_bytes / S)^exponent)
};

struct TuningSpec {
  RampSpec ring;                         // "ramp.ring."
  RampSpec nvls;                         // "ramp.nvls."
  int gpus_per_process = 1;              // "accelerator.gpus_per_process": nccl-tests -g N drives N GPUs from one process
  double launch_serial_ns = 2000;        // "accelerator.launch_serial_ns": each further GPU's launch in that process
  double one_shot_base_ns = 0;           // "one_shot.base_ns": symmetric one-shot kernel cost beyond the launch
  double two_shot_base_ns = 0;           // "two_shot.base_ns"
  double one_shot_link_efficiency = 0;   // "one_shot.link_efficiency" (0: links.efficiency)
  double two_shot_link_efficiency = 0;   // "two_shot.link_efficiency" (0: links.efficiency)
  double isa_link_efficiency = 0;        // "switch.isa.link_efficiency" (0: links.efficiency)
  double nvls_reduce_GBps = 1e6;         // "switch.nvls.reduce_GBps": NVLS reduction input bytes/s per plane
  bool quant_fused = false;              // "quant.fused": (de)quantisation hidden in the communication kernels
  double quant_launch_ns = 0;            // "quant.launch_ns": separate launch of each quantisation kernel
};

struct FabricShape {
  Topology topology = Topology::Star;
  int gpus = 8;
  int planes = 1;                        // parallel switch planes (star and two-tier; each plane its own network)
  // two-tier (issue 16): per plane, `leaves` leaf switches with gpus/leaves
  // accelerators each, `spines` spine switches, each leaf linked to the spines
  // by `uplinks_per_leaf` ports spread evenly over them, whose bandwidth is the
  // leaf's accelerator bandwidth / `oversubscription`.
  int leaves = 1;
  int spines = 1;
  int uplinks_per_leaf = 0;              // 0: one per local accelerator (gpus / leaves)
  double oversubscription = 1;           // leaf downlink bandwidth / uplink bandwidth
  std::string graph_file;                // a JSON node/link list, checked and drawn (core/fabric/graph.h)
};

/// Everything a collective simulation depends on apart from the collective itself.
struct Config {
  std::string name = "custom";
  std::string description;
  FabricShape fabric;
  AcceleratorSpec accelerator;
  LinkSpec links;
  SwitchSpec sw;                         // dotted path prefix: "switch."
  PacketSpec packet;
  RingSpec ring;
  QuantSpec quant;
  TuningSpec tuning;                     // paths listed on each field above
};

const char* to_string(Topology);
const char* to_string(Regulation);
const char* to_string(ScaleFormat);
const char* to_string(RingProtocol);
const char* to_string(Codec);
const char* to_string(StoreMode);

/// Bytes of one scale in `f`.
int scale_bytes(ScaleFormat f);

/// Bits per element of a codec's payload (8 for INT8/FP8, 4 for INT4).
int codec_bits(Codec c);

}  // namespace scin
