// The shape docs/architecture.md promises, checked on the source tree: no
// header cycle in core (a header reaching itself through its #includes) and no
// core file over 600 lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace scin {
namespace {

namespace fs = std::filesystem;

const fs::path kCore = fs::path(SCIN_SOURCE_DIR) / "core";

// Project includes of every file under `root`, as paths relative to it ("model/result.h").
std::map<std::string, std::vector<std::string>> include_graph(const fs::path& root) {
  static const std::regex inc(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::map<std::string, std::vector<std::string>> g;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cc") continue;
    auto& out = g[fs::relative(e.path(), root).generic_string()];
    std::ifstream in(e.path());
    std::smatch m;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, m, inc) && fs::exists(root / m[1].str())) out.push_back(m[1].str());
  }
  return g;
}

// A cycle through the include graph, as "a -> b -> a"; empty if none.
std::string find_cycle(const std::map<std::string, std::vector<std::string>>& g) {
  std::map<std::string, int> state;   // 0 new, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::string found;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    stack.push_back(f);
    auto it = g.find(f);
    if (it != g.end())
      for (const auto& to : it->second) {
        if (!found.empty()) break;
        if (state[to] == 1) {
          auto from = std::find(stack.begin(), stack.end(), to);
          for (; from != stack.end(); ++from) found += *from + " -> ";
          found += to;
        } else if (state[to] == 0) {
          visit(to);
        }
      }
    stack.pop_back();
    state[f] = 2;
  };
  for (const auto& [f, _] : g)
    if (found.empty() && state[f] == 0) visit(f);
  return found;
}

TEST(CoreLayout, NoHeaderCycle) {
  const auto g = include_graph(kCore);
  ASSERT_GT(g.size(), 50u) << kCore;   // the tree was found
  EXPECT_EQ(find_cycle(g), "");
  // The check itself: a cycle is found when there is one.
  auto bad = g;
  bad["model/result.h"].push_back("engines/simulate.h");
  EXPECT_NE(find_cycle(bad).find("engines/simulate.h"), std::string::npos);
}

TEST(CoreLayout, NoFileOverSixHundredLines) {
  for (const auto& e : fs::recursive_directory_iterator(kCore)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cc") continue;
    std::ifstream in(e.path());
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_LE(lines, 600) << e.path().generic_string() << ": split it by concern (docs/architecture.md)";
  }
}

}  // namespace
}  // namespace scin
