// Helpers for the store tests: a scratch folder removed at the end.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace scin::test {

/// 201 x 11 x 2 = 4,422 cheap ring points: enough to exercise batching, cancel and resume
/// (an 8-GPU ring point costs ~15 us since ranks alike: the cancelling tests stop it part-way).
inline constexpr const char* kMediumSweep = R"({
  "name": "medium",
  "base": {"preset": "hgx-h200-8", "collective": {"algorithm": "ring", "dtype": "bf16"}},
  "axes": [
    {"path": "links.latency_ns", "range": {"min": 50, "max": 250, "step": 1}},
    {"path": "switch.latency_ns", "range": {"min": 100, "max": 300, "step": 20}},
    {"path": "collective.bytes", "values": ["64", "4K"]}
  ]})";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "scin-store-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    if (!p) std::abort();
    path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    // Restore write permission first (tests make files read-only).
    for (auto& e : std::filesystem::recursive_directory_iterator(path_, ec))
      std::filesystem::permissions(e.path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace scin::test
