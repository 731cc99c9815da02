// The compiled form of a sweep spec, shared by the spec and runner code (internal).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace scin::sweep_detail {

struct Memo;   // thread-safe cache of identical points (sweep_spec.cc)

/// A spec with its axes expanded and its presets loaded: point evaluation
/// never touches the file system.
struct Compiled {
  SweepSpec spec;
  std::vector<std::vector<std::vector<nlohmann::json>>> values;  // [group][axis][i]
  std::vector<std::uint64_t> group_len;
  std::uint64_t total = 1;
  std::map<std::string, Config> presets;   // by name ("" = registry defaults)
  std::shared_ptr<Memo> memo;              // null: no memoisation
  std::atomic<std::uint64_t> memo_hits{0};
};

std::unique_ptr<Compiled> compile(const SweepSpec& spec, bool memoise);
ResolvedPoint resolve(const Compiled& c, std::uint64_t index);
PointRecord evaluate(Compiled& c, std::uint64_t index);

}  // namespace scin::sweep_detail
