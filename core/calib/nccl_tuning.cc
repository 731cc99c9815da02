#include "calib/nccl_tuning.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <fmt/format.h>

#include "base/error.h"
#include "base/units.h"
#include "calib/measured.h"
#include "schedule/nvls_policy.h"

namespace scin {

namespace {

enum Proto { LL = 0, LL128 = 1, Simple = 2 };
const char* const kProtoName[] = {"LL", "LL128", "Simple"};

// NCCL's default tuner constants within one node over NVLink (ncclTunerConstantsDefaults,
// src/tuning/cost_model.cc; the same values in the 2.19-2.2x src/graph/tuning.cc): latencies in
// us, bandwidths in GB/s.
constexpr double kBaseLatRing[3] = {6.6, 14.0, 8.4};
constexpr double kBaseLatTree[3] = {6.8, 14.0, 8.4};
constexpr double kHwLatRing[3] = {0.6, 1.9, 3.4};
constexpr double kHwLatTree[3] = {0.6, 1.25, 4.0};
constexpr double kHwLatNvls = 25.0;   // NVLS/Simple; baseLat 0
constexpr int kNvlsChannels = 16;     // NCCL_NVLS_NCHANNELS default

// Tree's correction factors for mid-size messages, by log2(bytes / 64) (treeCorrectionFactor).
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

double ll_max_GBps(GpuGeneration g) {  // llMaxBws, one node
  switch (g) {
    case GpuGeneration::Ampere: return 87.7;
    case GpuGeneration::Hopper: return 141.0;
    case GpuGeneration::Blackwell: return 2 * 141.0;
  }
  return 141.0;
}

double nvls_efficiency(GpuGeneration g) {  // src/tuning/nvls.cc
  switch (g) {
    case GpuGeneration::Ampere: return 0;
    case GpuGeneration::Hopper: return 0.85;
    case GpuGeneration::Blackwell: return 0.74;
  }
  return 0;
}

}  // namespace

NcclAutoPick nccl_auto_pick(const NcclTunerInput& in, std::uint64_t bytes) {
  if (in.ranks < 2) throw Error(fmt::format("nccl-auto: {} ranks; an All-Reduce needs 2 or more", in.ranks));
  if (bytes == 0) throw Error("nccl-auto: 0 bytes");
  if (!(in.nvlink_GBps > 0)) throw Error(fmt::format("nccl-auto: NVLink bandwidth {} GB/s, must be > 0", in.nvlink_GBps));
  const double n = in.ranks, s = static_cast<double>(bytes);
  const double steps = 2 * (n - 1);
  // Within one node NCCL's per-channel caps (perChMaxRingLL128Bws, perChMaxTreeBws,
  // perChMaxTreeLL128Bws) are above a channel's NVLink share on every generation, so the bus
  // bandwidth is the GPU's NVLink bandwidth with each protocol's factor.
  const double bus = in.nvlink_GBps;
  NcclAutoPick best;
  auto consider = [&](const char* algo, int proto, double lat_us, double alg_GBps, const std::string& stand_in) {
    if (!(alg_GBps > 0)) return;
    const double t = lat_us + s / (1000 * alg_GBps);
    if (best.algorithm.empty() || t < best.nccl_model_us) best = {algo, kProtoName[proto], stand_in, t};
  };
  const int log_size = std::max(0, static_cast<int>(std::bit_width(bytes >> 6)) - 1);  // NCCL's log2i
  for (int p : {LL, LL128, Simple}) {  // Tree, as NCCL lists it first (ties go to it)
    if (in.ring_only) break;
    double b = bus * .92;
    if (p == LL) b = std::min(b / 3.8, ll_max_GBps(in.generation));
    if (p == LL128) b *= 7.0 / 9.0;
    double alg = b * 0.5;
    if (log_size < 23) alg *= kTreeCorrection[p][log_size];
    consider("Tree", p, kBaseLatTree[p] + steps * kHwLatTree[p], alg, ring_algorithm_for(kRingProtocolKeys[p]));
  }
  for (int p : {LL, LL128, Simple}) {
    double b = bus;
    if (p == LL) b = std::min(ll_max_GBps(in.generation), b * .5);
    if (p == LL128) b *= 0.92;
    consider("Ring", p, kBaseLatRing[p] + steps * kHwLatRing[p], b * n / steps, ring_algorithm_for(kRingProtocolKeys[p]));
  }
  if (in.nvls && !in.ring_only) {
    const double eff = nvls_efficiency(in.generation);
    const double b = bus * eff * (kNvlsChannels - 1) / kNvlsChannels * 2;
    consider("NVLS", Simple, kHwLatNvls, b * n / steps, "nvls");
  }
  return best;
}

GpuGeneration nccl_generation(const std::string& name) {
  if (!name.empty() && (name[0] == 'B' || name.rfind("GB", 0) == 0)) return GpuGeneration::Blackwell;
  if (name.size() >= 2 && name[0] == 'A' && std::isdigit(static_cast<unsigned char>(name[1])))
    return GpuGeneration::Ampere;
  return GpuGeneration::Hopper;
}

NcclTunerInput nccl_tuner_input(const Config& cfg) {
  NcclTunerInput in;
  in.ranks = cfg.fabric.gpus;
  in.generation = nccl_generation(cfg.accelerator.name);
  const double per_line_rate = in.generation == GpuGeneration::Ampere    ? 20.0 / 25
                               : in.generation == GpuGeneration::Hopper ? 20.6 / 25
                                                                         : 40.1 / 50;
  in.nvlink_GBps = cfg.links.bandwidth_GBps * per_line_rate;
  in.nvls = nccl_runs_nvls(cfg) && nvls_efficiency(in.generation) > 0;
  return in;
}

NcclAutoPick nccl_auto_pick(const Config& cfg, std::uint64_t bytes) {
  return nccl_auto_pick(nccl_tuner_input(cfg), bytes);
}

std::vector<std::string> nccl_choice_runs(const Config& cfg, const std::vector<std::uint64_t>& sizes) {
  const NcclTunerInput in = nccl_tuner_input(cfg);
  std::vector<std::string> out;
  std::string run;
  std::uint64_t first = 0, last = 0;
  auto flush = [&] {
    if (run.empty()) return;
    out.push_back(first == last ? fmt::format("{} {}", run, format_size_bytes(first))
                                : fmt::format("{} {} - {}", run, format_size_bytes(first), format_size_bytes(last)));
  };
  for (std::uint64_t s : sizes) {
    const NcclAutoPick p = nccl_auto_pick(in, s);
    const std::string name = p.nccl_algorithm + "/" + p.nccl_protocol;
    if (name != run) {
      flush();
      run = name;
      first = s;
    }
    last = s;
  }
  flush();
  return out;
}

NcclAutoPick nccl_ring_pick(const Config& cfg, std::uint64_t bytes) {
  NcclTunerInput in = nccl_tuner_input(cfg);
  in.ring_only = true;
  return nccl_auto_pick(in, bytes);
}

}  // namespace scin
