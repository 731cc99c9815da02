// Measured All-Reduce timings: the rows `scin calibrate`, `scin validate` and
// `scin import` read.
//
// Two input formats:
//  - nccl-tests `all_reduce_perf` output (stdout of one or several runs in one
//    file): the "# nThread .. nGpus .." header, the "Using devices" rank list
//    (ranks sharing a Pid were driven by one process: `-g N`), optional NCCL
//    version and NCCL_* environment lines, and the data table with out-of-place
//    and in-place columns (with or without the `root` column of newer versions;
//    `#wrong` may be N/A). Several tables in one file are separate runs. Read as
//    users paste them: a launcher's tag on each line (Open MPI --tag-output,
//    MPICH -prepend-rank, srun --label) is removed, header lines that lost their
//    '#' still count, 0-byte rows (-b 0) are skipped and said. Another
//    benchmark's output is an error: a line naming another nccl-tests binary, or
//    a busbw / algbw other than All-Reduce's 2(n-1)/n at the table's rank count;
//    without the device list that ratio gives the count (ranks_from_busbw).
//  - CSV with a header naming at least system,gpus,algorithm,bytes and a time
//    (measured_us) or a bandwidth to derive it from (busbw / algbw, GB/s)
//    (optional: dtype, source_url, notes, gpus_per_process); extra columns are
//    ignored. Column names are matched without case and under other names files
//    use (`message_bytes`, `size_bytes` or `size` for bytes, `time_us` or
//    `latency_us` for the time, `world_size` or `num_gpus` for gpus, `algo`,
//    `type`...: csv_column_aliases() in measured.cc). Algorithm and element-type
//    spellings are normalised (canonical_algorithm, canonical_dtype). The long
//    layout of ../shared/reference/hopper-allreduce-anchors.csv is read too:
//    system,gpus,algorithm,message_bytes,metric,value,unit with metric time or
//    latency (unit ns/us/ms/s) or busbw / algbw (GB/s), a bandwidth being turned
//    into the time it implies.
// Malformed input is rejected with `FILE:LINE: what is wrong`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/config.h"

namespace scin {

/// One measured collective: the rank count, algorithm, size and time.
struct MeasuredRow {
  std::string system;          // CSV `system`, or the log's "FILE table K"
  int gpus = 0;
  std::string algorithm;       // scin algorithm name, "nccl-auto" (NCCL chose: calib/nccl_tuning.h) or
                               // "nccl-sym" (NCCL chose among its symmetric kernels: calib/nccl_sym.h)
  std::uint64_t bytes = 0;     // message size per rank
  double measured_us = 0;      // out-of-place time
  double in_place_us = -1;     // nccl-tests in-place time (-1: none)
  double busbw_GBps = -1;      // as reported (-1: none)
  std::string dtype = "fp32";
  int gpus_per_process = 1;    // >1: one process drove several GPUs (nccl-tests -g N)
  std::string source;          // "FILE:LINE" where the row was read
  std::string notes;           // CSV notes / source_url
};

/// One nccl-tests run (one table) with its header facts.
struct NcclTestsTable {
  int first_line = 0;          // line of the "# nThread" header (or of the first row)
  int threads = 1;             // nThread
  int gpus_per_thread = 1;     // nGpus (-g)
  int ranks = 0;               // "Using devices" entries (0: not printed)
  int ranks_from_busbw = 0;    // no device list: the count busbw / algbw = 2(n-1)/n names alone (0: none)
  int graph_launches = 0;      // "graph: N" (-G N: CUDA graph replays; 0: none)
  int agg_iters = 1;           // "agg iters: N" (-m N: collectives aggregated per launch)
  bool cpu_time = false;       // the time columns are "cputime" (host time)
  int processes = 0;           // distinct Pids among them
  std::string device;          // device name of rank 0, if printed
  std::string nccl_version;    // e.g. "2.18.3+cuda12.2"
  bool rccl = false;           // rccl-tests (AMD's port: its "rccl-tests: Version" or "RCCL version" line)
  std::map<std::string, std::string> env;  // NCCL_* settings seen (NCCL_ALGO=NVLS, ...)
  std::string op = "all_reduce";
  std::vector<MeasuredRow> rows;
  double avg_busbw_GBps = -1;  // "# Avg bus bandwidth" footer
};

struct MeasuredFile {
  std::filesystem::path path;
  std::string format;          // "nccl-tests" (text or JSON) | "csv"
  std::string sha256;          // of the file's bytes
  std::vector<NcclTestsTable> tables;   // nccl-tests only
  std::vector<MeasuredRow> rows;        // all rows, in file order
  std::vector<std::string> ignored;     // nccl-tests: "FILE:LINE: text" of lines that are no row
  std::vector<std::string> skipped_tables;  // nccl-tests: "FILE:LINE: X_perf's table (N rows) skipped: ..." (a suite's log)
};

/// An algorithm name as measurement files write it ("Ring", "NVLS", "auto", "one_shot",
/// "NCCL_ALGO=Tree" rows...) -> the name the model uses: ring, ring-ll, ring-ll128,
/// ring-simple, nvls, one-shot, two-shot, nccl-auto (NCCL chose), nccl-sym (NCCL chose among
/// its symmetric kernels), any other scin algorithm in lower case, or "nccl-tree" /
/// "nccl-nvlstree" / "nccl-collnet..." (not modelled).
std::string canonical_algorithm(std::string_view name);

/// A row's name for the ring with one protocol fixed: "ring-" + a key of kRingProtocolKeys
/// (fabric/config.h).
std::string ring_algorithm_for(std::string_view protocol_key);

/// The protocol key of "ring-ll" / "ring-ll128" / "ring-simple" (an entry of
/// kRingProtocolKeys); null for any other algorithm.
const char* ring_protocol_of(std::string_view algorithm);

/// A row labelled one-shot that was timed through NCCL's symmetric kernels (its system or
/// notes say `sym-mem` or "symmetric kernel", and no NCCL_SYM_KERNEL forced one kernel) is
/// NCCL's pick among them, which is a two-shot kernel above a few KiB (NCCL's
/// src/sym_kernels.cc cost model): such a row becomes "nccl-sym" and its notes say why.
/// True if the row was changed.
bool read_symmetric_kernel_choice(MeasuredRow& row);

/// An element type as files write it (float, float32, half, bfloat16, ...) -> fp32, fp16,
/// bf16, or the name in lower case.
std::string canonical_dtype(std::string_view name);

/// Parses nccl-tests output; `origin` names the input in errors and row sources.
/// Lines that are neither comments, NCCL log lines nor data rows (MPI or shell messages
/// pasted with the log: "8 more processes have sent help message ...", a prompt) are
/// skipped and, when `ignored` is given, listed there as "ORIGIN:LINE: text". A line whose
/// first two fields are whole numbers is a data row and must be a well-formed one. Another
/// benchmark's table (a suite's log) is skipped and, when `skipped_tables` is given, said there
/// as "ORIGIN:LINE: X_perf's table (N rows) skipped: ...".
std::vector<NcclTestsTable> parse_nccl_tests(const std::string& text, const std::string& origin,
                                             std::vector<std::string>* ignored = nullptr,
                                             std::vector<std::string>* skipped_tables = nullptr);

/// Parses nccl-tests' JSON report (`all_reduce_perf -J FILE`: "config" with nthreads, ngpus,
/// aggregated_iterations, graph and the devices, one per process; "env"; "nccl_version";
/// "results" with size, count, type, redop and out_of_place / in_place time, alg_bw, bus_bw)
/// into one table, checked as the text output is; rows are named "ORIGIN:results[K]".
std::vector<NcclTestsTable> parse_nccl_tests_json(const std::string& text, const std::string& origin,
                                                  std::vector<std::string>* ignored = nullptr);

/// Parses the simple CSV format.
std::vector<MeasuredRow> parse_measured_csv(const std::string& text, const std::string& origin);

/// Reads a file, detecting its format (a first non-blank character '{': nccl-tests JSON; a
/// first non-blank line starting with '#' or a data table: nccl-tests; a header with "bytes"
/// and "measured_us": CSV).
MeasuredFile load_measured(const std::filesystem::path& file);

/// Writes rows as the simple CSV format (round trip of parse_measured_csv).
std::string to_measured_csv(const std::vector<MeasuredRow>& rows);

/// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(const std::string& data);

}  // namespace scin
