// The C library's heap on transparent huge pages for large runs (issue 14).
//
// A large analytic point (a two-tier NVLS schedule, a ring-q8 booked in full)
// first-touches hundreds of MB of small allocations; on Linux with THP in
// "madvise" mode each 4 KiB page is a fault, and in a VM a fault costs
// microseconds: a third of such a point's time (docs/performance.md section
// 91). glibc (2.35 and later) advises its heap as huge pages when the
// tunable glibc.malloc.hugetlb=1 is set, and tunables are read only when a
// process starts: so a command that learns it will allocate much (`scin run`,
// and `scin sweep` outside MPI with its spec in a file, once their work is
// estimated and before they print or store anything) restarts itself once, in
// the same process (exec keeps the pid, the arguments, the working directory
// and the open files), with the tunable added. Nothing it computes changes;
// SCIN_HUGE_PAGES=0 turns this off.
#pragma once

#include <string>
#include <string_view>

namespace scin {

/// Linux's transparent huge page mode (/sys/kernel/mm/transparent_hugepage/enabled).
enum class ThpMode { Always, Madvise, Never, Unknown };

/// The selected mode in that file's text ("always [madvise] never" -> Madvise).
ThpMode thp_mode_from(std::string_view text);

/// This machine's mode (Unknown off Linux or where the file cannot be read).
ThpMode thp_mode();

/// Bytes of estimated memory from which a restart pays: 20 MiB (5,120 faults
/// of 4 KiB, 8-10 us each in this project's VMs, saved against ~3-5 ms for
/// the restart; SCIN at 576 GPUs and 1 GiB, 25 MB estimated, takes 0.11 s
/// without and 0.03-0.04 s with; SCIN+INQ at 1024 GPUs on 32 leaves of
/// nvl576-style, 24 MB, 0.09-0.13 s without and 0.03-0.05 s with; the ring
/// at 1024 GPUs, 17 MB estimated, whose large arrays are advised already,
/// gains nothing: performance.md sections 92 and 105).
inline constexpr double huge_pages_min_bytes = 20.0 * (1 << 20);

/// Whether a command about to use `memory_bytes` should restart with the
/// tunable: THP in madvise mode (in "always" mode the kernel already gives
/// huge pages; in "never" it gives none), at least huge_pages_min_bytes, the
/// tunable not already set (`glibc_tunables`: GLIBC_TUNABLES, null if unset)
/// and not turned off (`scin_huge_pages`: SCIN_HUGE_PAGES, null if unset; "0" turns it off).
bool huge_pages_restart_wanted(double memory_bytes, ThpMode mode, const char* glibc_tunables,
                               const char* scin_huge_pages);

/// GLIBC_TUNABLES with glibc.malloc.hugetlb=1 added (`glibc_tunables` null: unset).
std::string with_hugetlb_tunable(const char* glibc_tunables);

/// Sets GLIBC_TUNABLES to with_hugetlb_tunable() of its value, flushes stdout
/// and stderr and executes `exe` with `argv`; returns false if exec failed.
bool exec_with_hugetlb_tunable(const char* exe, char* const* argv);

/// Remembers the process's arguments for restart_with_huge_pages (main()).
void remember_process_args(int argc, char** argv);

/// If huge_pages_restart_wanted() for this process's environment, flushes
/// stdout and stderr and executes this program again with the same
/// arguments and the tunable set; returns only if it does not restart (not
/// wanted, no remembered arguments, or exec failed).
void restart_with_huge_pages_if_worth_it(double memory_bytes);

}  // namespace scin
