#include "calib/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"
#include "calib/nccl_sym.h"
#include "calib/nccl_tuning.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "schedule/nvls_policy.h"

namespace scin {

Regime regime_of(std::uint64_t bytes) {
  if (bytes <= (64ull << 10)) return Regime::Small;
  if (bytes >= (64ull << 20)) return Regime::Large;
  return Regime::Mid;
}

const char* to_string(Regime r) {
  switch (r) {
    case Regime::Small: return "small";
    case Regime::Mid: return "mid";
    case Regime::Large: return "large";
  }
  return "?";
}

namespace {

DType dtype_for(const MeasuredRow& row) {
  const std::string d = canonical_dtype(row.dtype);
  if (d == "bf16") return DType::Bf16;
  if (d == "fp16") return DType::Fp16;
  return row.bytes % 4 == 0 ? DType::Fp32 : DType::Bf16;
}

double simulate_us(const Config& c, const std::string& algo, const Collective& coll, const std::string& engine) {
  return simulate(c, algo, coll, engine).time_us();
}

// A scin algorithm, or "ring-ll" / "ring-ll128" / "ring-simple": the ring with that protocol.
double algorithm_us(Config c, const std::string& algo, const Collective& coll, const std::string& engine) {
  if (const char* p = ring_protocol_of(algo)) {
    set_param(c, "ring.protocol", p);
    return simulate_us(c, "ring", coll, engine);
  }
  return simulate_us(c, algo, coll, engine);
}

// The ring as NCCL runs it when asked for Ring alone: NCCL picks the protocol by its own model
// (calib/nccl_tuning.h). Where that is not the one our engines find fastest, `note` says so; a
// preset that fixes ring.protocol keeps it.
double ring_as_nccl_runs_us(const Config& c, const Collective& coll, const std::string& engine, std::string* note) {
  if (c.ring.protocol != RingProtocol::Auto) return simulate_us(c, "ring", coll, engine);
  const NcclAutoPick pick = nccl_ring_pick(c, coll.bytes);
  if (note) {
    // Our fastest ring, one simulation; where it is NCCL's pick it is also the row's time (the
    // engines cost a protocol they choose as one they are given; test
    // Validate.RingRowsRunTheProtocolNcclsTunerPicks).
    const SimResult fastest = simulate(c, "ring", coll, engine);
    if ("ring-" + ascii_lower(fastest.variant) == pick.algorithm) return fastest.time_us();
    *note = fmt::format("modelled as {}: NCCL's tuning model picks Ring/{} at this size (src/graph/tuning.cc), "
                        "our fastest is {}", pick.algorithm, pick.nccl_protocol, fastest.variant);
  }
  return algorithm_us(c, pick.algorithm, coll, engine);
}

std::optional<double> row_time_us(const Config& cfg, const MeasuredRow& row, std::string* why,
                                  const std::string& engine, std::string* note) {
  try {
    if (row.gpus > cfg.fabric.gpus) {
      // A larger run spans several NVLink domains joined by a scale-out network, which the
      // fabric does not describe: modelling it as one bigger domain would be silent nonsense.
      if (why)
        *why = fmt::format("{} GPUs exceed the fabric's {} ({}): the network between NVLink domains is not "
                           "modelled (--gpus {} models one domain of {})",
                           row.gpus, cfg.fabric.gpus, cfg.name, row.gpus, row.gpus);
      return std::nullopt;
    }
    Config c = cfg;
    if (row.gpus != c.fabric.gpus) set_param(c, "fabric.gpus", static_cast<double>(row.gpus));
    // nccl-tests -g N: one process launches on N GPUs one after another (until 2026-12-06 this
    // looked up "nccl.gpus_per_process", a path the registry never had, so no row took it).
    set_param(c, "accelerator.gpus_per_process", static_cast<double>(std::clamp(row.gpus_per_process, 1, row.gpus)));
    Collective coll{row.bytes, dtype_for(row)};
    if (row.bytes % static_cast<std::uint64_t>(dtype_bytes(coll.dtype)) != 0)
      throw Error(fmt::format("bytes: {} is not a whole number of 2-byte elements", row.bytes));
    const std::string& a = row.algorithm;
    if (a == "nccl-auto") {
      // NCCL picks algorithm and protocol by its own cost model (calib/nccl_tuning.h), not by
      // which is truly fastest; the pick, costed by our engines, stands in for it (NVLS only
      // where NCCL runs it: schedule/nvls_policy.h; Tree by the ring with its protocol).
      NcclAutoPick pick = nccl_auto_pick(c, row.bytes);
      if (pick.algorithm == "nvls" && !unsupported_reason(c, "nvls").empty()) pick = nccl_ring_pick(c, row.bytes);
      const std::string& algo = pick.algorithm;
      if (note)
        *note = fmt::format("modelled as {}: NCCL's tuning model picks {}/{} at this size (src/graph/tuning.cc){}",
                            algo, pick.nccl_algorithm, pick.nccl_protocol,
                            pick.nccl_algorithm == "Tree" ? "; scin has no tree schedule, the ring with its protocol "
                                                            "stands in" : "");
      return algorithm_us(c, algo, coll, engine);
    }
    if (a == "nccl-sym") {
      // NCCL's symmetric kernels: NCCL picks one by its own cost model (calib/nccl_sym.h); the
      // kernel's family, one-shot or two-shot, stands in for it (the other where the fabric
      // lacks it).
      const NcclSymPick pick = nccl_sym_pick(c, row.bytes);
      std::string algo = pick.algorithm;
      const std::string other = algo == "one-shot" ? "two-shot" : "one-shot";
      if (!unsupported_reason(c, algo).empty()) algo = other;
      if (!unsupported_reason(c, algo).empty()) {
        if (why) *why = "NCCL's symmetric kernels: neither one-shot nor two-shot runs on " + c.name;
        return std::nullopt;
      }
      if (note)
        *note = fmt::format("modelled as {}: NCCL's symmetric kernels run {} at this size (its cost model, "
                            "src/sym_kernels.cc)", algo, pick.kernel);
      return simulate_us(c, algo, coll, engine);
    }
    if (a == "nvls" && unsupported_reason(c, "nvls").empty() && !nccl_runs_nvls(c)) {
      // NCCL_ALGO=NVLS where NCCL has no NVLS: NCCL runs ring, and so does the model of the row.
      std::string protocol;
      const double t = ring_as_nccl_runs_us(c, coll, engine, &protocol);
      if (note) *note = "modelled as ring: " + nccl_nvls_note(c) + (protocol.empty() ? "" : "; " + protocol);
      return t;
    }
    if (ring_protocol_of(a)) return algorithm_us(c, a, coll, engine);
    if (a == "ring") return ring_as_nccl_runs_us(c, coll, engine, note);
    if (!find_algorithm(a)) {
      if (why)
        *why = fmt::format("algorithm '{}' is not modelled (modelled: nccl-auto, nccl-sym, ring, ring-ll, ring-ll128, "
                           "ring-simple and the algorithms of `scin run --algo`)", a);
      return std::nullopt;
    }
    return simulate_us(c, a, coll, engine);
  } catch (const Error& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::optional<double> model_time_us(const Config& cfg, const MeasuredRow& row, std::string* why,
                                    const std::string& engine, std::string* note) {
  const auto t = row_time_us(cfg, row, why, engine, note);
  // A row of one process driving several GPUs says so: the run it is drawn against launches
  // from one process per GPU, and this row's model adds the serialised launches.
  if (t && note && row.gpus_per_process > 1 && cfg.tuning.launch_serial_ns != 0) {
    const int n = std::min(row.gpus_per_process, row.gpus);
    *note += fmt::format("{}with the launches of one process driving {} GPUs (nccl-tests -g {}) serialised, "
                         "{} ns each (accelerator.launch_serial_ns)",
                         note->empty() ? "modelled " : "; ", n, n, cfg.tuning.launch_serial_ns);
  }
  return t;
}

ErrorStats error_stats(const std::vector<const RowError*>& rows) {
  ErrorStats s;
  for (const RowError* r : rows) {
    if (!r->modelled) continue;
    ++s.rows;
    s.mape_pct += std::abs(r->error) * 100;
    s.bias_pct += r->error * 100;
    s.max_abs_pct = std::max(s.max_abs_pct, std::abs(r->error) * 100);
  }
  if (s.rows > 0) {
    s.mape_pct /= s.rows;
    s.bias_pct /= s.rows;
  }
  return s;
}

bool names_product(const std::string& system_as_written, const std::string& name_as_written) {
  if (name_as_written.empty()) return false;
  const std::string system = ascii_lower(system_as_written), name = ascii_lower(name_as_written);
  // A word of its own: no letter or digit before it, except a count "8x", and no digit after it
  // ("H100SXM" and "8xH100" name H100, "GH200" does not name H200, "H1000" does not name H100).
  auto alnum = [&](std::size_t k) { return std::isalnum(static_cast<unsigned char>(system[k])) != 0; };
  auto digit = [&](std::size_t k) { return std::isdigit(static_cast<unsigned char>(system[k])) != 0; };
  auto counted = [&](std::size_t pos) {  // "8x" or "16x" right before, itself a word's start
    if (pos < 2 || system[pos - 1] != 'x' || !digit(pos - 2)) return false;
    std::size_t k = pos - 2;
    while (k > 0 && digit(k - 1)) --k;
    return k == 0 || !alnum(k - 1);
  };
  for (auto pos = system.find(name); pos != std::string::npos; pos = system.find(name, pos + 1)) {
    const std::size_t end = pos + name.size();
    if ((pos == 0 || !alnum(pos - 1) || counted(pos)) &&
        (end == system.size() || !std::isdigit(static_cast<unsigned char>(system[end]))))
      return true;
  }
  return false;
}

std::string harness_label(const std::string& system) {
  const auto close = system.rfind(')');
  if (close == std::string::npos) return "";
  const auto open = system.rfind('(', close);
  if (open == std::string::npos) return "";
  std::string label = ascii_lower(system.substr(open + 1, close - open - 1));
  const auto b = label.find_first_not_of(' '), e = label.find_last_not_of(' ');
  return b == std::string::npos ? "" : label.substr(b, e - b + 1);
}

double harness_offset_for(const std::map<std::string, double>& offsets_us, const std::string& system,
                          std::string* from) {
  if (auto it = offsets_us.find(system); it != offsets_us.end()) {
    if (from) *from = it->first;
    return it->second;
  }
  const std::string label = harness_label(system);
  if (label.empty()) return 0;
  for (const auto& [k, v] : offsets_us)
    if (harness_label(k) == label) {
      if (from) *from = k;
      return v;
    }
  return 0;
}

std::map<std::string, double> harness_offsets_used(const std::vector<MeasuredRow>& rows,
                                                  const std::map<std::string, double>& offsets_us) {
  std::map<std::string, double> used;
  for (const auto& row : rows) {
    std::string from;
    const double off = harness_offset_for(offsets_us, row.system, &from);
    if (!from.empty()) used[from] = off;
  }
  return used;
}

int preset_for_row(const std::vector<std::pair<std::string, Config>>& presets, const MeasuredRow& row) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(presets.size()); ++k) {
    const Config& c = presets[static_cast<std::size_t>(k)].second;
    if (!names_product(row.system, c.accelerator.name)) continue;
    if (best < 0) {
      best = k;
      continue;
    }
    const int g = c.fabric.gpus, b = presets[static_cast<std::size_t>(best)].second.fabric.gpus;
    const bool holds = g >= row.gpus, best_holds = b >= row.gpus;
    if ((holds && !best_holds) || (holds && best_holds && g < b) || (!holds && !best_holds && g > b)) best = k;
  }
  return best;
}

ValidationReport validate_rows(const Config& cfg, const std::vector<MeasuredRow>& rows,
                               const std::map<std::string, double>& offsets_us) {
  ValidationReport rep;
  for (const auto& row : rows) {
    RowError e;
    e.row = row;
    e.regime = regime_of(row.bytes);
    if (auto t = model_time_us(cfg, row, &e.why, "analytic", &e.note)) {
      std::string from;
      e.offset_us = harness_offset_for(offsets_us, row.system, &from);
      if (!from.empty() && from != row.system)
        e.note += std::string(e.note.empty() ? "" : "; ") + "harness offset of '" + from + "' (the same harness)";
      e.model_us = *t + e.offset_us;
      e.error = e.model_us / row.measured_us - 1;
      e.modelled = true;
    }
    rep.rows.push_back(std::move(e));
  }
  summarise(rep);
  return rep;
}

void summarise(ValidationReport& rep) {
  rep.by_regime.clear();
  rep.by_algorithm.clear();
  rep.by_system.clear();
  std::vector<const RowError*> all;
  std::map<std::string, std::vector<const RowError*>> reg, alg, sys;
  for (const auto& e : rep.rows) {
    all.push_back(&e);
    reg[to_string(e.regime)].push_back(&e);
    alg[e.row.algorithm].push_back(&e);
    sys[e.row.system].push_back(&e);
  }
  rep.overall = error_stats(all);
  for (auto& [k, v] : reg) rep.by_regime[k] = error_stats(v);
  for (auto& [k, v] : alg) rep.by_algorithm[k] = error_stats(v);
  for (auto& [k, v] : sys) rep.by_system[k] = error_stats(v);
}

nlohmann::json to_json(const ErrorStats& s) {
  if (s.rows == 0)   // no rows: no error statistics (null), not 0%
    return {{"rows", 0}, {"mape_pct", nullptr}, {"bias_pct", nullptr}, {"max_abs_pct", nullptr}};
  return {{"rows", s.rows}, {"mape_pct", s.mape_pct}, {"bias_pct", s.bias_pct}, {"max_abs_pct", s.max_abs_pct}};
}

nlohmann::json to_json(const ValidationReport& r, bool with_rows) {
  nlohmann::json j;
  j["overall"] = to_json(r.overall);
  for (const auto& [k, v] : r.by_regime) j["by_regime"][k] = to_json(v);
  for (const auto& [k, v] : r.by_algorithm) j["by_algorithm"][k] = to_json(v);
  for (const auto& [k, v] : r.by_system) j["by_system"][k] = to_json(v);
  if (with_rows) {
    j["rows"] = nlohmann::json::array();
    for (const auto& e : r.rows) {
      nlohmann::json x = {{"source", e.row.source}, {"system", e.row.system}, {"gpus", e.row.gpus},
                          {"algorithm", e.row.algorithm}, {"bytes", e.row.bytes},
                          {"measured_us", e.row.measured_us}, {"regime", to_string(e.regime)}};
      if (e.modelled) {
        x["model_us"] = e.model_us;
        if (e.offset_us != 0) x["harness_offset_us"] = e.offset_us;
        x["error_pct"] = e.error * 100;
        if (!e.note.empty()) x["note"] = e.note;
      } else {
        x["skipped"] = e.why;
      }
      j["rows"].push_back(std::move(x));
    }
  }
  return j;
}

}  // namespace scin