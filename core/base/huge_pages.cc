#include "base/huge_pages.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace scin {

namespace {
constexpr std::string_view kTunable = "glibc.malloc.hugetlb";
int g_argc = 0;
char** g_argv = nullptr;
}  // namespace

ThpMode thp_mode_from(std::string_view text) {
  if (text.find("[always]") != std::string_view::npos) return ThpMode::Always;
  if (text.find("[madvise]") != std::string_view::npos) return ThpMode::Madvise;
  if (text.find("[never]") != std::string_view::npos) return ThpMode::Never;
  return ThpMode::Unknown;
}

ThpMode thp_mode() {
#if defined(__linux__)
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!f) return ThpMode::Unknown;
  std::ostringstream text;
  text << f.rdbuf();
  return thp_mode_from(text.str());
#else
  return ThpMode::Unknown;
#endif
}

bool huge_pages_restart_wanted(double memory_bytes, ThpMode mode, const char* glibc_tunables,
                               const char* scin_huge_pages) {
  if (scin_huge_pages && std::string_view(scin_huge_pages) == "0") return false;
  if (mode != ThpMode::Madvise || !(memory_bytes >= huge_pages_min_bytes)) return false;
  return !glibc_tunables || std::string_view(glibc_tunables).find(kTunable) == std::string_view::npos;
}

std::string with_hugetlb_tunable(const char* glibc_tunables) {
  std::string t = glibc_tunables ? glibc_tunables : "";
  if (!t.empty()) t += ':';
  t += kTunable;
  t += "=1";
  return t;
}

void remember_process_args(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
}

bool exec_with_hugetlb_tunable(const char* exe, char* const* argv) {
#if defined(__linux__)
  const std::string t = with_hugetlb_tunable(std::getenv("GLIBC_TUNABLES"));
  if (setenv("GLIBC_TUNABLES", t.c_str(), 1) != 0) return false;
  std::fflush(stdout);
  std::fflush(stderr);
  execv(exe, argv);
#else
  (void)exe;
  (void)argv;
#endif
  return false;
}

void restart_with_huge_pages_if_worth_it(double memory_bytes) {
#if defined(__linux__) && defined(__GLIBC__)
  if (g_argc < 1 || !g_argv || !(memory_bytes >= huge_pages_min_bytes)) return;  // (before reading the mode's file)
  if (!huge_pages_restart_wanted(memory_bytes, thp_mode(), std::getenv("GLIBC_TUNABLES"), std::getenv("SCIN_HUGE_PAGES")))
    return;
  // (If exec fails, go on as we are: the tunable now in the environment keeps this from being tried again.)
  exec_with_hugetlb_tunable("/proc/self/exe", g_argv);
#else
  (void)memory_bytes;
#endif
}

}  // namespace scin
