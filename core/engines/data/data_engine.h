// The data engine: executes a Schedule on real per-rank arrays.
//
// It runs the same schedule the analytic and packet engines time, step by step
// in list order (which is topological, so the result is deterministic), with
// the data semantics documented in model/schedule.h:
//   Copy   - dst = src converted to dst's format (round to BF16/FP16, quantise
//            to a block codec, dequantise; codec -> identical codec copies the
//            codes and scales unchanged, as a forwarded payload is).
//   Reduce - dst = (accumulate ? dst : 0) + srcs in listed order, the running
//            sum rounded to `accum` after every addition (FP32 in the NVLS
//            switch and the ISA; BF16/FP16 at every hop for the software ring),
//            codec sources dequantised first; then converted to dst's format.
// Every buffer is held in its own format: FP32 values as floats, BF16/FP16
// values as their 16-bit patterns, codec buffers as one code per element plus one
// scale per block (block b covers elements [b*G, (b+1)*G)). Regions of codec
// buffers should start on a block boundary; a region that does not (a slot
// whose size is not a whole number of blocks) is quantised in blocks starting at
// its own offset, and its step runs serially.
// Work within a step is split over TBB tasks at block-aligned chunk
// boundaries; every element's arithmetic is independent of the split, so the
// result is bit-identical for any thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/big_alloc.h"
#include "base/run_context.h"
#include "schedule/schedule.h"

namespace scin {

class InputCodes;

struct DataOptions {
  /// Fill every buffer except the inputs with NaN first, so that a schedule
  /// reading data no step wrote shows up as NaN in the outputs (tests).
  bool poison_unwritten = false;
  /// Skip work whose result is already held: a copy whose destination is only
  /// read while its source is unchanged is read from the source, and a
  /// reduction of the same sources as an earlier one copies its result. Every
  /// value read, outputs included, is bit-identical to executing each step as
  /// listed (false: execute them as listed; tests compare the two).
  bool share_work = true;
  /// Quantised inputs shared between runs on the same CheckedInputs (see
  /// InputCodes); null, or bound to other inputs: every run quantises its own.
  InputCodes* input_codes = nullptr;
  /// Workspace runs: outputs held as BF16 patterns are returned as those
  /// patterns (DataRun::bf16), not decoded to floats (a study measures them as such).
  bool bf16_outputs = false;
};

struct DataResult {
  std::vector<std::vector<float>> outputs;   // per rank: the output buffer, decoded to float
  std::uint64_t data_steps = 0;              // steps with a data effect executed
  std::uint64_t elements_processed = 0;      // sum over data steps of count x (srcs + dsts)
};

/// Runs `s` on `inputs_per_rank` (gpus arrays of s.elems values each, converted
/// to each rank's input buffer format first). Throws Error on mismatched sizes,
/// or non-finite inputs; checks ctx.stop between steps (throws Cancelled).
DataResult run_data(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank,
                    const DataOptions& opt = {}, const RunContext& ctx = {});

/// Storage the data engine keeps between runs. A run with a workspace lays every
/// buffer out in one block of memory that the next run reuses (no allocation,
/// page faults or zero-filling per run: storage a step reads before anything
/// wrote it is filled on first read), reads rank inputs that are already exact
/// in their buffer's format and that no step writes in place, and returns the
/// outputs as views.
class DataWorkspace {
 public:
  DataWorkspace();
  ~DataWorkspace();
  DataWorkspace(DataWorkspace&&) noexcept;
  DataWorkspace& operator=(DataWorkspace&&) noexcept;

  /// Bytes of storage a run of `s` with shared work takes: the buffers it
  /// touches, as laid out (slots), linear in ranks for every algorithm (inputs
  /// and shared input codes read in place take less).
  static std::uint64_t bytes_for(const Schedule& s);
  /// Makes room for `bytes` of storage now (a study reserves for its largest
  /// schedule first, so that the storage is mapped once).
  void reserve(std::uint64_t bytes);
  std::uint64_t capacity_bytes() const;

  struct Storage;   // opaque: the data engine's own
  Storage& storage() { return *st_; }

 private:
  std::unique_ptr<Storage> st_;
};

/// Result of a run with a workspace: the outputs are views into the workspace
/// (or into the inputs), valid until the workspace's next run or destruction
/// and while the inputs live.
struct DataRun {
  std::vector<std::span<const float>> outputs;   // per rank: the output buffer, decoded to float
  // Per rank, with DataOptions::bf16_outputs: the output's BF16 patterns when
  // the buffer holds them (outputs[r] is then empty), else empty.
  std::vector<std::span<const std::uint16_t>> bf16;
  std::uint64_t data_steps = 0;
  std::uint64_t elements_processed = 0;
};

/// run_data with reusable storage: the same results, bit for bit.
DataRun run_data(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank, DataWorkspace& ws,
                 const DataOptions& opt = {}, const RunContext& ctx = {});

/// Inputs checked once for several runs (a study runs every algorithm on the
/// same inputs): the constructor throws the Error run_data throws for the first
/// non-finite element (ranks in order), and records which ranks' inputs are
/// exact in BF16 (exactness in FP16 is found on first use and kept). Holds a
/// reference: `inputs` must outlive it and must not change while it is used.
class CheckedInputs {
 public:
  explicit CheckedInputs(const std::vector<std::vector<float>>& inputs);
  /// Inputs held as BF16 patterns, one array per rank (a BF16 study's inputs,
  /// without FP32 arrays): runs on them give the results and errors, bit for
  /// bit, of runs on their values as floats. The constructor throws the same
  /// Error for a non-finite value; values() is then empty.
  explicit CheckedInputs(const std::vector<BigVector<std::uint16_t>>& bf16);
  /// The inputs as floats (empty when held as BF16 patterns).
  const std::vector<std::vector<float>>& values() const { return *values_; }
  /// The inputs as BF16 patterns, or null when held as floats.
  const std::vector<BigVector<std::uint16_t>>* bf16_patterns() const { return bf16_values_; }
  std::size_t ranks() const { return sizes_.size(); }
  /// Elements per rank.
  const std::vector<std::uint64_t>& sizes() const { return sizes_; }
  /// Element i of rank `rank`'s input.
  float value(int rank, std::uint64_t i) const;
  /// Whether rank `rank`'s input is exact in element format `f` (FP32: always;
  /// a codec format: never, a codec buffer is always encoded).
  bool exact(int rank, Format f) const;

 private:
  const std::vector<std::vector<float>>* values_;
  const std::vector<BigVector<std::uint16_t>>* bf16_values_ = nullptr;
  std::vector<std::uint64_t> sizes_;
  std::vector<char> bf16_;
  // Per rank: 0 = not yet known, 1 = not exact in FP16, 2 = exact.
  std::unique_ptr<std::atomic<unsigned char>[]> fp16_;
};

/// The ranks' inputs quantised once for several runs (a study's scin-inq,
/// ring-q8 and two-shot-q8 each quantise every rank's input with the same
/// codec). A run with DataOptions::input_codes bound to its CheckedInputs keeps,
/// for every copy from a rank's input that no step writes (read in place) into
/// a codec buffer with the cache's codec, the codes and scales it computed; a
/// later copy of a region already held copies them instead of quantising again.
/// Only regions whose blocks are the input's own block grid are shared: the
/// source and destination start on a multiple of the block size G and the
/// region ends on one or at the input's end, so each block is [bG, (b+1)G)
/// of the input (the last cut at its end) in every run, and its codes and scale
/// are a function of those values alone: the same bits as quantising again.
/// The first codec used is the cache's; runs with another codec quantise as
/// before. It also holds the FP32 sums of the inputs: a reduction that adds
/// every rank's input read in place, each once, all at the same offset, from +0 in FP32 (not
/// accumulating into its destination) in the rank order of the first such
/// reduction keeps its running sums; a later one of a region already held (a
/// study's one-shot, two-shot, NVLS and SCIN each add the 8 inputs in rank
/// order) writes them instead of adding again: the same additions of the same
/// values, the same bits. One run at a time may use an InputCodes.
class InputCodes {
 public:
  explicit InputCodes(const CheckedInputs& inputs);
  ~InputCodes();
  InputCodes(const InputCodes&) = delete;
  InputCodes& operator=(const InputCodes&) = delete;
  /// Elements whose codes are held, over all ranks (tests).
  std::uint64_t held_elements() const;
  /// Elements whose shared input sums are held (tests; see below).
  std::uint64_t summed_elements() const;
  /// Codec buffers, over all runs, that read the held codes in place instead
  /// of holding a copy (tests): a buffer written only by copies that take the
  /// codes of one rank's input at the input's own offsets, and read only where
  /// written before, is the cache's arrays themselves.
  std::uint64_t buffers_read_in_place() const;

  struct State;   // opaque: the data engine's own
  State& state() { return *st_; }

 private:
  std::unique_ptr<State> st_;
};

/// run_data on inputs checked once: the same results and errors, bit for bit,
/// as run_data(s, inputs.values(), ws, opt, ctx), without scanning the inputs again.
DataRun run_data(const Schedule& s, const CheckedInputs& inputs, DataWorkspace& ws, const DataOptions& opt = {},
                 const RunContext& ctx = {});

/// Rounds every value of `v` to the element format `f` (Fp32: unchanged).
void round_to_format(std::vector<float>& v, Format f);

}  // namespace scin
