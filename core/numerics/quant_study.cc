#include "numerics/quant_study.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <tuple>


#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "schedule/algorithms.h"
#include "base/error.h"
#include "base/memory.h"
#include "fabric/params.h"
#include "numerics/codec.h"
#include "numerics/formats.h"
#include "engines/data/data_engine.h"
#include "numerics/inputs.h"
#include "numerics/measure_cache.h"

namespace scin {

const char* to_string(Distribution d) {
  switch (d) {
    case Distribution::Gaussian: return "gaussian";
    case Distribution::Laplace: return "laplace";
    case Distribution::Outliers: return "outliers";
  }
  return "?";
}

Distribution parse_distribution(const std::string& text) {
  if (text == "gaussian") return Distribution::Gaussian;
  if (text == "laplace") return Distribution::Laplace;
  if (text == "outliers") return Distribution::Outliers;
  throw Error(fmt::format("--dist: '{}' is not a distribution; allowed gaussian, laplace, outliers", text));
}

namespace {

// Total bytes crossing accelerator links (egress + ingress over all accelerators).
double total_link_bytes(const LinkBytes& lb) {
  double t = 0;
  for (double b : lb.egress_bytes) t += b;
  for (double b : lb.ingress_bytes) t += b;
  return t;
}


// Rounds x[0, n) to the element format `f` as round_to_format does.
void round_values(float* x, std::uint64_t n, Format f) {
  if (f == Format::Bf16)
    for (std::uint64_t i = 0; i < n; ++i) x[i] = num::round_bf16_fast(x[i]);
  else if (f == Format::Fp16)
    for (std::uint64_t i = 0; i < n; ++i) x[i] = num::round_fp16(x[i]);
}

}  // namespace

namespace {

// Bytes per rank and element a study holds at its peak: the input (BF16
// patterns, else FP32 values), the shared input codes (INT8 codes and block
// scales, 1.25 at most) and the data engine's workspace for the largest
// schedule, at most one array of the dtype per rank (DataWorkspace::bytes_for:
// outputs that equal rank 0's take short-lived slots).
double per_rank_element_bytes(DType dtype) {
  const double held = dtype == DType::Bf16 ? 2.0 : 4.0;
  return held + 1.25 + dtype_bytes(dtype);
}

}  // namespace

std::uint64_t quant_memory_bytes(int gpus, std::uint64_t elements, DType dtype, std::size_t algorithms) {
  const double g = std::max(gpus, 1), e = static_cast<double>(elements);
  const double schedule = algorithms > 0 ? 3072 * g * g : 0;   // the largest, with its plan
  return static_cast<std::uint64_t>(g * e * per_rank_element_bytes(dtype) + 32 * e + schedule) + (32ull << 20);
}

void check_quant_memory(int gpus, std::uint64_t elements, DType dtype, std::size_t algorithms,
                        std::uint64_t available) {
  const std::uint64_t need = quant_memory_bytes(gpus, elements, dtype, algorithms);
  if (available == 0 || need <= available / 5 * 4) return;
  throw Error(fmt::format("--elements: {} per rank x {} ranks ({}) needs about {} MiB (every rank's input and "
                          "the data engine's buffers are held in RAM: ~{} bytes per rank and element), more than "
                          "80% of the {} MiB this machine has available; use fewer elements or ranks",
                          elements, gpus, to_string(dtype), need >> 20, per_rank_element_bytes(dtype),
                          available >> 20));
}

WorkEstimate quant_study_work(int gpus, std::uint64_t elements, DType dtype, std::size_t algorithms) {
  // One core (section 83 of docs/performance.md): per rank and element, the
  // inputs generated (log, cos), rounded, checked and summed exactly, and the
  // references, ~6 ns held as BF16 and ~16 ns as FP32 (the first touch of
  // twice the bytes), then each algorithm's run and measurement ~0.8 / ~1.5 ns;
  // per algorithm and rank^2, compiling, checking and planning its schedule
  // (a ring's 2 N (N - 1) steps), ~5 us.
  const double g = std::max(gpus, 1);
  const double re = g * static_cast<double>(elements);
  const bool bf16 = dtype == DType::Bf16;
  const double n = static_cast<double>(algorithms);
  WorkEstimate w;
  w.amount = re * n;
  w.unit = "elements";
  w.seconds = re * ((bf16 ? 6e-9 : 16e-9) + n * (bf16 ? 0.8e-9 : 1.5e-9)) + n * g * g * 5e-6;
  w.memory_bytes = static_cast<double>(quant_memory_bytes(gpus, elements, dtype, algorithms));
  return w;
}

QuantStudy run_quant(const Config& cfg_in, const QuantRequest& req, const RunContext& ctx) {
  validate(cfg_in);
  Config cfg = cfg_in;
  // The ring protocol changes timing, not arithmetic: compile with Simple when auto.
  if (cfg.ring.protocol == RingProtocol::Auto) cfg.ring.protocol = RingProtocol::Simple;
  const int gpus = cfg.fabric.gpus;

  QuantStudy st;
  st.gpus = gpus;
  st.dtype = req.dtype;
  st.quant = cfg.quant;
  st.input = req.input;
  st.npy_files = req.npy_files;

  std::vector<std::string> algos = req.algorithms;
  if (algos.empty()) algos = supported_algorithms(cfg);
  for (const auto& a : algos) {
    require_supported(cfg, parse_algorithm(a, "--algo"), "--algo");
  }

  // Inputs, rounded to the collective's dtype: what the GPUs hold.
  std::vector<std::vector<float>> inputs;
  if (!req.npy_files.empty()) {
    inputs = load_npy_inputs(req.npy_files, gpus);
  } else {
    if (req.elements < 1 || req.elements > kMaxQuantElemsPerRank)
      throw Error(fmt::format("--elements: {} is outside [1, {}] per rank", req.elements, kMaxQuantElemsPerRank));
  }
  const std::uint64_t elems = req.npy_files.empty() ? req.elements : inputs.front().size();
  if (elems > kMaxQuantElemsPerRank)
    throw Error(fmt::format("--npy: {} elements per rank exceeds the limit of {}", elems, kMaxQuantElemsPerRank));
  check_quant_memory(gpus, elems, req.dtype, algos.size(), available_memory_bytes());
  ctx.check();
  // A BF16 study's generated inputs are held as BF16 patterns only (no FP32
  // arrays), generated, rounded and summed exactly in one pass: the same values
  // and sums. A value that is not finite or overflows BF16 takes the path below,
  // which reports it.
  std::vector<BigVector<std::uint16_t>> patterns;
  std::vector<double> exact_fp32;   // the FP32 path's exact sum
  BigVector<double> exact_bf16;      // the one-pass generator's (not zero-filled first)
  const bool held_bf16 = req.npy_files.empty() && req.dtype == DType::Bf16 &&
                         generate_bf16_inputs(req.input, gpus, elems, patterns, exact_bf16, &ctx);
  if (!held_bf16) {
    patterns = {};
    if (req.npy_files.empty()) inputs = generate_inputs(req.input, gpus, elems, &ctx);
  }
  st.elements = elems;
  const Format dfmt = format_of(req.dtype);
  ctx.check();
  if (!held_bf16) {
    round_inputs(inputs, req.dtype, req.npy_files.empty() ? "input" : "--npy");
    exact_bf16 = {};
    exact_fp32 = exact_sum(inputs);
  }
  const std::span<const double> exact = held_bf16 ? std::span<const double>(exact_bf16) : std::span<const double>(exact_fp32);
  ctx.check();

  // References: the exact sum rounded once to dtype, and quantised once then
  // rounded; built part by part (parts of whole codec blocks, so the blocks
  // are those of the whole array), held as BF16 patterns in a BF16 study, and
  // measured with the algorithms' outputs (MeasureCache::flush, up to eight
  // arrays in one pass, each array's sums added in element order).
  MeasureCache metrics(exact, dfmt);
  metrics.reserve(algos.size(), static_cast<std::size_t>(gpus));
  std::vector<std::size_t> measured;   // each row's key in `metrics`
  measured.reserve(algos.size());
  std::size_t ref_once = 0, ref_q = 0;
  {
    const num::CodecSpec spec{num::codec_format(cfg.quant.codec), cfg.quant.block_elems, cfg.quant.scale_format};
    const auto g = static_cast<std::uint64_t>(std::max(1, spec.block_elems));
    const std::uint64_t part = std::max<std::uint64_t>(1, 8192 / g) * g;
    const bool bf16 = dfmt == Format::Bf16;
    // A BF16 study keeps the references as patterns only (each part's floats
    // in scratch); the parts are independent, so they run in parallel (the
    // same values: each part's arithmetic is its own).
    BigVector<float> once(bf16 ? 0 : elems), q(once.size());
    BigVector<std::uint16_t> once_half(bf16 ? elems : 0), q_half(once_half.size());
    const std::uint64_t parts = (elems + part - 1) / part;
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, parts), [&](const tbb::blocked_range<std::uint64_t>& pr) {
      std::vector<float> sa(bf16 ? std::min(part, elems) : 0), sb(sa.size());
      for (std::uint64_t p = pr.begin(); p < pr.end(); ++p) {
        const std::uint64_t lo = p * part;
        const std::uint64_t len = std::min(part, elems - lo);
        float* a = bf16 ? sa.data() : once.data() + lo;
        float* b = bf16 ? sb.data() : q.data() + lo;
        const double* e = exact.data() + lo;
        for (std::uint64_t i = 0; i < len; ++i) a[i] = static_cast<float>(e[i]);
        num::fake_quantise(a, len, spec, b);
        round_values(a, len, dfmt);
        round_values(b, len, dfmt);
        if (bf16)
          for (std::uint64_t i = 0; i < len; ++i) {
            once_half[lo + i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(a[i]) >> 16);
            q_half[lo + i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(b[i]) >> 16);
          }
      }
    });
    ref_once = metrics.hold(std::move(once_half), std::move(once), elems);
    ref_q = metrics.hold(std::move(q_half), std::move(q), elems);
  }

  const Collective coll{elems * static_cast<std::uint64_t>(dtype_bytes(req.dtype)), req.dtype};
  RunContext step_ctx;   // the data engine polls the caller's stop; progress is per algorithm
  step_ctx.stop = ctx.stop;
  // Every algorithm runs in one data-engine workspace sized up front for the
  // largest (inputs read in place, at most one array of the dtype per rank:
  // DataWorkspace::bytes_for, without planning every schedule twice): its
  // storage is mapped once per study, not once per algorithm (a run needing
  // more grows it). Schedules are compiled one at a time (at 1024 ranks,
  // millions of steps each).
  DataWorkspace ws;
  ws.reserve(static_cast<std::uint64_t>(gpus) * elems * static_cast<std::uint64_t>(dtype_bytes(req.dtype)));
  // The inputs are checked (finite; exact in BF16 / FP16 or not) once for
  // every algorithm, not once per run: the same errors and results.
  const CheckedInputs checked = held_bf16 ? CheckedInputs(patterns) : CheckedInputs(inputs);
  // scin-inq, ring-q8 and two-shot-q8 each quantise every rank's input with
  // the study's codec: the codes are computed once and shared (the same bits).
  InputCodes codes(checked);
  DataOptions opt;
  opt.input_codes = &codes;
  opt.bf16_outputs = dfmt == Format::Bf16;   // outputs held as BF16 measured as such, not decoded
  for (std::size_t k = 0; k < algos.size(); ++k) {
    const std::string& a = algos[k];
    ctx.check();
    Schedule s = compile(cfg, a, coll);
    const DataRun res = run_data(s, checked, ws, opt, step_ctx);
    QuantRow row;
    row.algorithm = a;
    row.variant = s.variant;
    row.quantised = find_algorithm(a)->quantised;
    measured.push_back(metrics.defer(res.outputs, res.bf16));   // measured below
    const LinkBytes lb = link_bytes(s);
    row.max_link_bytes = lb.max_link_bytes();
    double wire = 0;
    for (double b : lb.egress_bytes) wire += b;
    row.wire_bytes = wire;
    // The same schedule with every codec buffer in dtype (in place: `s` is
    // not used after): the unquantised byte count.
    for (auto& b : s.buffers)
      if (is_codec(b.format)) b.format = dfmt;
    const double plain_total = total_link_bytes(link_bytes(s));
    row.payload_ratio = plain_total > 0 ? total_link_bytes(lb) / plain_total : 1.0;
    st.rows.push_back(std::move(row));
    ctx.report(static_cast<double>(st.rows.size()) / static_cast<double>(algos.size()));
  }
  st.dtype_round = metrics.held_metrics(ref_once);
  st.single_quant = metrics.held_metrics(ref_q);
  for (std::size_t k = 0; k < st.rows.size(); ++k) st.rows[k].metrics = metrics.result(measured[k]);
  set_error_variance_ratios(st);
  return st;
}

void set_error_variance_ratios(QuantStudy& st) {
  const double ref = st.single_quant.rel_l2 * st.single_quant.rel_l2;
  for (QuantRow& row : st.rows) row.error_variance_ratio = ref > 0 ? row.metrics.rel_l2 * row.metrics.rel_l2 / ref : 0.0;
}

QuantStudy with_unquantised_rows_of(QuantStudy quantised, const QuantStudy& full) {
  std::vector<QuantRow> rows;
  for (const QuantRow& r : full.rows) {
    const auto same = std::find_if(quantised.rows.begin(), quantised.rows.end(),
                                   [&](const QuantRow& q) { return q.algorithm == r.algorithm; });
    if (r.quantised && same == quantised.rows.end())
      throw Error(fmt::format("quant study: no row of '{}' to merge", r.algorithm));
    rows.push_back(r.quantised ? *same : r);
  }
  quantised.rows = std::move(rows);
  set_error_variance_ratios(quantised);
  return quantised;
}

nlohmann::json to_json(const QuantRow& r) {
  nlohmann::json j;
  j["algorithm"] = r.algorithm;
  j["variant"] = r.variant;
  j["quantised"] = r.quantised;
  j["metrics"] = to_json(r.metrics);
  j["payload_ratio"] = r.payload_ratio;
  j["wire_bytes"] = r.wire_bytes;
  j["max_link_bytes"] = r.max_link_bytes;
  j["error_variance_ratio"] = r.error_variance_ratio;
  return j;
}

nlohmann::json to_json(const QuantStudy& s) {
  nlohmann::json j;
  j["gpus"] = s.gpus;
  j["elements"] = s.elements;
  j["dtype"] = to_string(s.dtype);
  j["quant.codec"] = to_string(s.quant.codec);
  j["quant.block_elems"] = s.quant.block_elems;
  j["quant.scale_format"] = to_string(s.quant.scale_format);
  if (s.npy_files.empty()) {
    j["input"] = {{"dist", to_string(s.input.dist)},
                  {"stddev", s.input.stddev},
                  {"seed", s.input.seed}};
    if (s.input.dist == Distribution::Outliers) {
      j["input"]["outlier_fraction"] = s.input.outlier_fraction;
      j["input"]["outlier_scale"] = s.input.outlier_scale;
      j["input"]["channels"] = s.input.channels;
    }
  } else {
    j["input"] = {{"npy", s.npy_files}};
  }
  j["reference"] = {{"dtype_round", to_json(s.dtype_round)}, {"single_quant", to_json(s.single_quant)}};
  j["results"] = nlohmann::json::array();
  for (const auto& r : s.rows) j["results"].push_back(to_json(r));
  return j;
}

}  // namespace scin
