// The data engine's workspace (DataWorkspace), run_data without one, and round_to_format (data_engine.h).
#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "engines/data/buffers.h"
#include "engines/data/data_engine.h"
#include "engines/data/plan.h"
#include "engines/data/slots.h"

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

// As run_data lays it out with shared work (the default), less what inputs
// and shared input codes read in place save (which depends on the inputs).
std::uint64_t DataWorkspace::bytes_for(const Schedule& s) {
  std::vector<char> same_as_rank0;
  std::vector<Step> steps = plan_steps(s, &same_as_rank0);
  std::vector<BufferDecl> decls;
  const std::vector<BufferDecl>& laid = slot_storage(s, steps, decls, nullptr, &same_as_rank0) ? decls : s.buffers;
  return laid_bytes(laid, touched_buffers(s, laid.size(), steps, same_as_rank0));
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
