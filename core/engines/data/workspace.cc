// The data engine's workspace (DataWorkspace), run_data without one, and round_to_format (data_engine.h).
#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "engines/data/buffers.h"
#include "engines/data/data_engine.h"

namespace scin {

using namespace data_internal;

void round_to_format(std::vector<float>& v, Format f) {
  if (is_codec(f)) throw Error(fmt::format("round_to_format: {} is not an element format", to_string(f)));
  if (f == Format::Bf16)
    for (float& x : v) x = num::round_bf16_fast(x);
  else
    for (float& x : v) x = round_plain(x, f);
}

DataWorkspace::DataWorkspace() : st_(std::make_unique<Storage>()) {}
DataWorkspace::~DataWorkspace() = default;
DataWorkspace::DataWorkspace(DataWorkspace&&) noexcept = default;
DataWorkspace& DataWorkspace::operator=(DataWorkspace&&) noexcept = default;

std::uint64_t DataWorkspace::bytes_for(const Schedule& s) {
  std::uint64_t n = 0;
  for (const BufferDecl& d : s.buffers) n += storage_bytes(d);
  return n;
}

void DataWorkspace::reserve(std::uint64_t bytes) { st_->reserve(bytes); }

std::uint64_t DataWorkspace::capacity_bytes() const { return st_->capacity; }

DataResult run_data(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank,
                    const DataOptions& opt, const RunContext& ctx) {
  DataWorkspace ws;
  const DataRun run = run_data(s, inputs_per_rank, ws, opt, ctx);
  DataResult res;
  res.data_steps = run.data_steps;
  res.elements_processed = run.elements_processed;
  res.outputs.reserve(run.outputs.size());
  for (const auto& o : run.outputs) res.outputs.emplace_back(o.begin(), o.end());
  return res;
}

}  // namespace scin
