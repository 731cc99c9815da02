// Measured-data parsing, calibration and validation (core/calib).
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "error_of.h"

#include "base/error.h"
#include "calib/compare.h"
#include "calib/fit.h"
#include "calib/holdout.h"
#include "calib/measured.h"
#include "calib/nccl_sym.h"
#include "calib/nccl_tuning.h"
#include "calib/validate.h"
#include "cli_util.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "store/store.h"

namespace {

using namespace scin;
namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(SCIN_CALIB_FIXTURES);

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A file of `text` in the temporary directory (the caller removes it).
fs::path temp_file(const std::string& name, const std::string& text) {
  const fs::path f = fs::temp_directory_path() / name;
  std::ofstream(f, std::ios::binary) << text;
  return f;
}

// `scin validate FILE ARGS --format json`, parsed; the test fails on a non-zero exit.
nlohmann::json validate_json(const fs::path& f, const std::string& args) {
  auto r = run_cli("validate '" + f.string() + "' " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.output;
  return r.status == 0 ? nlohmann::json::parse(r.output) : nlohmann::json();
}

TEST(NcclTestsLog, SingleProcessEightGpusParsesEveryColumn) {
  const MeasuredFile m = load_measured(kFixtures / "allreduce-g8-single-process.log");
  EXPECT_EQ(m.format, "nccl-tests");
  ASSERT_EQ(m.tables.size(), 1u);
  const NcclTestsTable& t = m.tables[0];
  EXPECT_EQ(t.gpus_per_thread, 8);
  EXPECT_EQ(t.ranks, 8);
  EXPECT_EQ(t.processes, 1);
  EXPECT_EQ(t.device, "NVIDIA H200");
  EXPECT_EQ(t.nccl_version, "2.21.5+cuda12.4");
  EXPECT_DOUBLE_EQ(t.avg_busbw_GBps, 69.3141);
  ASSERT_EQ(t.rows.size(), 13u);
  const MeasuredRow& r0 = t.rows[0];
  EXPECT_EQ(r0.bytes, 8u);
  EXPECT_EQ(r0.gpus, 8);
  EXPECT_EQ(r0.gpus_per_process, 8);  // -g 8: one process launches on all eight GPUs
  EXPECT_EQ(r0.algorithm, "nccl-auto");
  EXPECT_EQ(r0.dtype, "fp32");
  EXPECT_DOUBLE_EQ(r0.measured_us, 31.52);
  EXPECT_DOUBLE_EQ(r0.in_place_us, 30.87);
  EXPECT_EQ(r0.source, "allreduce-g8-single-process.log:19");
  const MeasuredRow& last = t.rows.back();
  EXPECT_EQ(last.bytes, 134217728u);
  EXPECT_DOUBLE_EQ(last.measured_us, 596.14);
  EXPECT_DOUBLE_EQ(last.busbw_GBps, 394.01);
  EXPECT_EQ(m.sha256.size(), 64u);
}

// Found by the `measured` fuzzer (tests/fuzz/corpus/measured/regression-vertical-tab-line.log): a
// line of white space that trim() keeps (a vertical tab, a form feed) read its first word from an
// empty list. Such a line is blank: skipped like an empty one.
TEST(NcclTestsLog, ALineOfOtherWhiteSpaceIsBlank) {
  std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  auto rows = [](const std::vector<NcclTestsTable>& t) { return t.size() == 1 ? t[0].rows.size() : 0; };
  const std::size_t before = rows(parse_nccl_tests(log, "a.log"));
  ASSERT_EQ(before, 13u);
  const std::size_t at = log.find("\n", log.find("redop"));  // after the column header, among the rows
  ASSERT_NE(at, std::string::npos);
  log.insert(at + 1, "\v\n\f\n \v \n");
  EXPECT_EQ(rows(parse_nccl_tests(log, "a.log")), before);
}

// `text` with `edit` applied to every line (each line with its newline removed and put back).
std::string each_line(const std::string& text, const std::function<std::string(const std::string&)>& edit) {
  std::istringstream in(text);
  std::string out;
  for (std::string l; std::getline(in, l);) out += edit(l) + "\n";
  return out;
}

// The rows two parses agree on: sizes, times, rank counts and line numbers.
void expect_same_rows(const std::vector<NcclTestsTable>& a, const std::vector<NcclTestsTable>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    EXPECT_EQ(a[t].ranks, b[t].ranks);
    EXPECT_EQ(a[t].processes, b[t].processes);
    EXPECT_EQ(a[t].device, b[t].device);
    EXPECT_EQ(a[t].nccl_version, b[t].nccl_version);
    ASSERT_EQ(a[t].rows.size(), b[t].rows.size());
    for (std::size_t k = 0; k < a[t].rows.size(); ++k) {
      const MeasuredRow &x = a[t].rows[k], &y = b[t].rows[k];
      EXPECT_EQ(x.bytes, y.bytes);
      EXPECT_EQ(x.gpus, y.gpus);
      EXPECT_EQ(x.gpus_per_process, y.gpus_per_process);
      EXPECT_DOUBLE_EQ(x.measured_us, y.measured_us);
      EXPECT_DOUBLE_EQ(x.in_place_us, y.in_place_us);
      EXPECT_EQ(x.source, y.source);
    }
  }
}

// A file of one nccl-tests table with these facts.
void expect_one_table(const MeasuredFile& m, int ranks, int processes, const std::string& device) {
  EXPECT_EQ(m.format, "nccl-tests");
  ASSERT_EQ(m.tables.size(), 1u);
  EXPECT_EQ(m.tables[0].ranks, ranks);
  EXPECT_EQ(m.tables[0].processes, processes);
  EXPECT_EQ(m.tables[0].device, device);
}

// Logs of `mpirun` / `srun` runs carry the launcher's tag on every line: Open MPI's
// --tag-output "[1,0]<stdout>:", MPICH's -prepend-rank "[0] " (which also tags the second
// half of a row that nccl-tests prints in two writes), Slurm's srun --label "0: ". They read
// as the untagged log: the same rows, ranks, processes and line numbers.
TEST(NcclTestsLog, LauncherTagsAreStripped) {
  const std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  const auto plain = parse_nccl_tests(log, "a.log");
  expect_same_rows(parse_nccl_tests(each_line(log, [](const std::string& l) { return "[1,0]<stdout>:" + l; }), "a.log"), plain);
  expect_same_rows(parse_nccl_tests(each_line(log, [](const std::string& l) { return "0: " + l; }), "a.log"), plain);
  // MPICH: "[0]" before the line and before the in-place half ("... -1[0]    30.87 ...").
  const std::string split = each_line(log, [](const std::string& l) {
    std::string t = "[0] " + l;
    if (const auto at = t.find("     -1 "); at != std::string::npos) t.insert(at + 7, "[0]");
    return t;
  });
  ASSERT_NE(split.find("-1[0]"), std::string::npos);
  expect_same_rows(parse_nccl_tests(split, "a.log"), plain);
  // A time stamp is no tag: the line is not a row and is skipped as before.
  std::vector<std::string> ignored;
  parse_nccl_tests(log + "12:04:33 job done\n", "a.log", &ignored);
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0], "a.log:35: 12:04:33 job done");
}

// A log pasted through Markdown loses the '#' of its header and footer lines (a leading '#'
// makes a heading): "nThread ...", "Using devices", the rank list, the column header and the
// NCCL version still read as such.
TEST(NcclTestsLog, HeaderLinesWithoutTheirHashStillRead) {
  const std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  std::vector<std::string> ignored;
  const auto tables = parse_nccl_tests(
      each_line(log, [](const std::string& l) { return !l.empty() && l[0] == '#' ? l.substr(1) : l; }), "a.log", &ignored);
  expect_same_rows(tables, parse_nccl_tests(log, "a.log"));
  EXPECT_EQ(tables.at(0).gpus_per_thread, 8);
  EXPECT_TRUE(ignored.empty()) << ignored.front();
  // Without its '#', a line that only starts like a header is no header: "Rank 3 failed" is no device.
  const std::string odd = each_line(log, [](const std::string& l) { return l.rfind("# Using", 0) == 0 ? l + "\nRank 3 failed" : l; });
  ignored.clear();
  EXPECT_EQ(parse_nccl_tests(odd, "a.log", &ignored).at(0).ranks, 8);
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0], "a.log:4: Rank 3 failed");
}

// nccl-tests run with -b 0 prints rows of 0 bytes: they time the call alone, and there is no
// 0-byte All-Reduce to model. They are skipped and said, the other rows kept.
TEST(NcclTestsLog, ZeroByteRowsAreSkippedAndSaid) {
  std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  const std::string zero = "           0             0     float     sum      -1     5.70    0.00    0.00      0     5.54    0.00    0.00      0\n";
  log.insert(log.find("           8             2"), zero + zero);
  std::vector<std::string> ignored;
  const auto tables = parse_nccl_tests(log, "z.log", &ignored);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].rows.size(), 13u);
  EXPECT_EQ(tables[0].rows[0].bytes, 8u);
  EXPECT_EQ(tables[0].rows[0].source, "z.log:21");
  ASSERT_EQ(ignored.size(), 2u);
  EXPECT_EQ(ignored[0].rfind("z.log:19: a 0-byte row", 0), 0u) << ignored[0];
}

// Another benchmark's log is no All-Reduce: an error naming the line, never a run modelled as
// the wrong collective. Told by the binary a line names, or by busbw / algbw, which nccl-tests
// computes as 2(n-1)/n for All-Reduce only ((n-1)/n reduce_scatter and all_gather, 1 broadcast).
TEST(NcclTestsLog, OtherCollectivesAreRejectedWithTheLine) {
  const std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  const std::string ag = "# Collective test starting: all_gather_perf\n" + log;
  EXPECT_NE(error_of([&] { parse_nccl_tests(ag, "g.log"); }).find("g.log:1: all_gather_perf is nccl-tests' all_gather benchmark"),
            std::string::npos);
  const std::string cmd = "$ mpirun -np 8 ./build/reduce_scatter_perf -b 8 -e 128M -f 4\n" + log;
  EXPECT_NE(error_of([&] { parse_nccl_tests(cmd, "r.log"); }).find("r.log:1: reduce_scatter_perf is"), std::string::npos);
  // A suite's log: another benchmark's table among All-Reduce ones is skipped and said; the
  // All-Reduce tables are read (a line naming a benchmark after a table's rows names the next run).
  {
    std::string other_table = log;  // (its rows as all_gather's would be: any numbers, not checked)
    std::vector<std::string> ignored, skipped;
    const auto t = parse_nccl_tests("$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8\n" + log + "# Collective test concluded: all_reduce_perf\n" +
                                        "$ ./build/all_gather_perf -b 8 -e 128M -f 2 -g 8\n" + other_table +
                                        "# Collective test starting: all_reduce_perf\n" + log,
                                    "suite.log", &ignored, &skipped);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].rows.size(), 13u);
    EXPECT_EQ(t[1].rows.size(), 13u);
    const int lines = static_cast<int>(std::count(log.begin(), log.end(), '\n'));
    EXPECT_EQ(t[1].first_line, 2 * lines + 5);  // (its own '# nThread' line)
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0], fmt::format("suite.log:{}: all_gather_perf's table (13 rows) skipped: scin reads All-Reduce tables only",
                                      lines + 4));
    EXPECT_EQ(ignored.size(), 2u) << fmt::format("{}", fmt::join(ignored, "\n"));  // (the two command lines)
  }
  // busbw halved on the last row (reduce_scatter's factor at 8 ranks), then equal to algbw (broadcast's).
  auto with_busbw = [&](const std::string& busbw) {
    std::string t = log;
    t.replace(t.find("394.01"), 6, busbw);
    return t;
  };
  const std::string rs = error_of([&] { parse_nccl_tests(with_busbw("197.00"), "s.log"); });
  EXPECT_NE(rs.find("s.log:31: busbw / algbw = 0.875, reduce_scatter's and all_gather's (n-1)/n, where an All-Reduce on "
                    "the table's 8 ranks reports 2(n-1)/n = 1.750"),
            std::string::npos)
      << rs;
  EXPECT_NE(error_of([&] { parse_nccl_tests(with_busbw("225.15"), "b.log"); }).find("b.log:31: busbw / algbw = 1.000, broadcast's"),
            std::string::npos);
  // Within the printed precision: the last digit off by one is the same ratio.
  EXPECT_EQ(parse_nccl_tests(with_busbw("394.02"), "ok.log").at(0).rows.size(), 13u);
}

// Without the '# Using devices' list nThread x nGpus counts one process's GPUs only (a run of
// mpirun -np 8 -g 1 says nGpus 1). busbw / algbw = 2(n-1)/n then gives the run's count where it
// names one alone and one process's count divides it; where it contradicts that count, an error.
TEST(NcclTestsLog, RankCountFromBusbwWithoutTheDeviceList) {
  const std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  auto without_list = [&](const std::string& gpus) {
    return each_line(log, [&](const std::string& l) {
      if (l.rfind("#  Rank", 0) == 0) return std::string("#");
      if (l.rfind("# nThread", 0) == 0) return "# nThread 1 nGpus " + gpus + " minBytes 8 maxBytes 134217728 step: 4(factor)";
      return l;
    });
  };
  const auto one = parse_nccl_tests(without_list("1"), "n.log");
  EXPECT_EQ(one.at(0).ranks, 0);
  EXPECT_EQ(one[0].ranks_from_busbw, 8);
  EXPECT_EQ(one[0].rows.at(0).gpus, 8);
  EXPECT_EQ(one[0].rows[0].gpus_per_process, 1);
  EXPECT_EQ(parse_nccl_tests(without_list("4"), "n.log").at(0).rows.at(0).gpus, 8);  // (-g 4 on two processes)
  EXPECT_NE(error_of([&] { parse_nccl_tests(without_list("3"), "n.log"); })
                .find("n.log:26: busbw / algbw = 1.750, where an All-Reduce on the table's 3 ranks reports 2(n-1)/n = 1.333: "
                      "not all_reduce_perf output, or the rank count (nThread x nGpus: no '# Using devices' list) is wrong"),
            std::string::npos);
}

// The newest nccl-tests' text layouts: the per-iteration report (four more columns a half:
// i_min i_max i_p99 i_cv%) and a time stamp after the in-place half read as the plain table.
TEST(NcclTestsLog, PerIterationColumnsAndTimeStampsRead) {
  const std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  const auto plain = parse_nccl_tests(log, "a.log");
  auto with = [&](bool per_iter, bool stamp) {
    return each_line(log, [&](const std::string& l) {
      std::vector<std::string> w;
      std::istringstream in(l);
      for (std::string x; in >> x;) w.push_back(x);
      const bool row = !w.empty() && std::isdigit(static_cast<unsigned char>(w[0][0]));
      const bool header = w.size() > 2 && w[0] == "#" && w[1] == "size";
      if (!row && !header) return l;
      // (a half's #wrong: words 8 and 12 of a row, 9 and 13 of the header, which starts with "#")
      const std::size_t first = header ? 9 : 8, second = header ? 13 : 12;
      std::string out;
      for (std::size_t k = 0; k < w.size(); ++k) {
        out += (k ? "  " : "") + w[k];
        if (per_iter && (k == first || k == second)) out += header ? "  i_min  i_max  i_p99  i_cv%" : "  30.1  33.0  32.9  1.52";
      }
      if (stamp) out += header ? "  timestamp" : "  2025-06-01 12:00:07";
      return out;
    });
  };
  for (bool per_iter : {false, true})
    for (bool stamp : {false, true}) {
      SCOPED_TRACE(fmt::format("per-iteration {} time stamps {}", per_iter, stamp));
      const std::string t = with(per_iter, stamp);
      if (per_iter) {
        ASSERT_NE(t.find("i_cv%  time"), std::string::npos);
      }
      expect_same_rows(parse_nccl_tests(t, "a.log"), plain);
      // (with srun --label's "0: ", which also stands inside the time stamps' "12:00:07")
      expect_same_rows(parse_nccl_tests(each_line(t, [](const std::string& l) { return "0: " + l; }), "a.log"), plain);
    }
  // What the model does not see is said in each row's notes: CUDA graph replays (-G), several
  // collectives per launch (-m), host time ("cputime").
  std::string g = log;
  g.replace(g.find("agg iters: 1"), 12, "agg iters: 4");
  g.replace(g.find("graph: 0"), 8, "graph: 2");
  g.replace(g.find("     time   algbw"), 17, "  cputime   algbw");
  const std::string notes = parse_nccl_tests(g, "a.log").at(0).rows.at(0).notes;
  EXPECT_NE(notes.find("CUDA graph (-G 2)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("4 collectives per launch (-m 4)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("host (CPU) time"), std::string::npos) << notes;
  EXPECT_EQ(parse_nccl_tests(log, "a.log").at(0).rows.at(0).notes, "nccl-tests NCCL 2.21.5+cuda12.4; redop sum");
  // A column header with its time columns side by side is no layout: rows are read as the plain
  // table's and a short one is an error, never a read past its columns.
  EXPECT_NE(error_of([&] {
              parse_nccl_tests("# nThread 1 nGpus 8\n# size count type redop root time time\n 8 2 float sum -1 31.5 0.0\n", "t.log");
            }).find("t.log:3: expected 9 or 13 columns"),
            std::string::npos);
  // A row of the per-iteration layout with a column missing is still an error naming the line.
  std::string bad = with(true, false);
  bad.replace(bad.find("  30.1  33.0  32.9  1.52"), 24, "");
  EXPECT_NE(error_of([&] { parse_nccl_tests(bad, "a.log"); }).find("a.log:19: expected 13 or 21 columns"), std::string::npos);
}

// nccl-tests' JSON report (-J FILE, version 2 of src/util.cu's writer) reads as its text log:
// the same rows, rank count (one device entry per process, nThread x nGpus ranks each),
// device, NCCL version and NCCL_ALGO from its environment list.
TEST(NcclTestsJson, ReadsTheReportAsTheLog) {
  const MeasuredFile j = load_measured(kFixtures / "allreduce-g8-report.json");
  const MeasuredFile l = load_measured(kFixtures / "allreduce-g8-single-process.log");
  ASSERT_NO_FATAL_FAILURE(expect_one_table(j, 8, 1, "NVIDIA H200"));
  EXPECT_EQ(j.tables[0].nccl_version, "2.21.5");
  ASSERT_EQ(j.rows.size(), l.rows.size());
  for (std::size_t k = 0; k < j.rows.size(); ++k) {
    EXPECT_EQ(j.rows[k].bytes, l.rows[k].bytes);
    EXPECT_EQ(j.rows[k].gpus, 8);
    EXPECT_EQ(j.rows[k].gpus_per_process, 8);
    EXPECT_EQ(j.rows[k].algorithm, "nvls");  // (env: NCCL_ALGO=NVLS)
    EXPECT_DOUBLE_EQ(j.rows[k].measured_us, l.rows[k].measured_us);
    EXPECT_DOUBLE_EQ(j.rows[k].in_place_us, l.rows[k].in_place_us);
  }
  EXPECT_EQ(j.rows[3].source, "allreduce-g8-report.json:results[3]");
}

// What is wrong in a JSON report is named by its place; another benchmark's report, a 0-byte
// row and an MPI run's devices (one entry per process) are handled as in the text log.
TEST(NcclTestsJson, MalformedReportsNameThePlace) {
  const nlohmann::json good = nlohmann::json::parse(read(kFixtures / "allreduce-g8-report.json"));
  auto parse = [](const nlohmann::json& d) { return parse_nccl_tests_json(d.dump(), "r.json"); };
  auto err = [&](const nlohmann::json& d) { return error_of([&] { parse(d); }); };
  EXPECT_NE(error_of([&] { parse_nccl_tests_json("{\"results\": [", "r.json"); }).find("r.json: malformed JSON"), std::string::npos);
  // A number beyond a double's range (found by fuzz_measured): an Error naming the file, not an escaping json::out_of_range.
  EXPECT_NE(error_of([&] { parse_nccl_tests_json("{\"results\": [], \"config\": {\"maximum_bytes\": 134E17728}}", "r.json"); })
                .find("r.json: malformed JSON: number overflow"),
            std::string::npos);
  EXPECT_NE(err({{"version", 2}}).find("r.json: not an nccl-tests JSON report"), std::string::npos);
  nlohmann::json d = good;
  d["results"][2]["type"] = "float33";
  EXPECT_NE(err(d).find("r.json:results[2].type: unknown nccl-tests type 'float33'"), std::string::npos);
  d["results"][2]["type"] = 4;
  EXPECT_NE(err(d).find("r.json:results[2].type: expected a string, got 4"), std::string::npos);
  d = good;
  d["results"][4]["count"] = 100;
  EXPECT_NE(err(d).find("r.json:results[4]: size 2048 is not count 100 x 4 bytes"), std::string::npos);
  d = good;
  d["results"][5]["out_of_place"]["time"] = "fast";
  EXPECT_NE(err(d).find("r.json:results[5].out_of_place.time: expected a number"), std::string::npos);
  d = good;
  d["args"][0] = "./build/all_gather_perf";
  EXPECT_NE(err(d).find("r.json: args: all_gather_perf is nccl-tests' all_gather benchmark"), std::string::npos);
  d = good;
  d["results"][12]["out_of_place"]["bus_bw"] = d["results"][12]["out_of_place"]["alg_bw"];
  EXPECT_NE(err(d).find("r.json:results[12]: busbw / algbw = 1.000, broadcast's"), std::string::npos);
  d = good;
  d["config"]["ngpus"] = 0;
  EXPECT_NE(err(d).find("r.json: config.ngpus: '0' is not a positive count"), std::string::npos);
  // A 0-byte row is skipped and said.
  d = good;
  d["results"][0]["size"] = 0;
  d["results"][0]["count"] = 0;
  std::vector<std::string> ignored;
  EXPECT_EQ(parse_nccl_tests_json(d.dump(), "r.json", &ignored).at(0).rows.size(), 12u);
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0].rfind("r.json:results[0]: a 0-byte row", 0), 0u);
  // mpirun -np 2 ... -g 4: one device entry per process, four ranks each.
  d = good;
  d["config"]["ngpus"] = 4;
  d["config"]["devices"].push_back(d["config"]["devices"][0]);
  d["config"]["devices"][1]["pid"] = 41231;
  const auto t = parse(d);
  EXPECT_EQ(t.at(0).ranks, 8);
  EXPECT_EQ(t[0].processes, 2);
  EXPECT_EQ(t[0].rows.at(0).gpus_per_process, 4);
}

TEST(NcclTestsLog, TwoTablesOneProcessPerGpuWithEnvironment) {
  const MeasuredFile m = load_measured(kFixtures / "allreduce-per-process-two-tables.log");
  ASSERT_EQ(m.tables.size(), 2u);
  for (const auto& t : m.tables) {
    EXPECT_EQ(t.ranks, 4);
    EXPECT_EQ(t.processes, 4);
    EXPECT_EQ(t.env.at("NCCL_ALGO"), "NVLS");
    for (const auto& r : t.rows) {
      EXPECT_EQ(r.gpus, 4);
      EXPECT_EQ(r.gpus_per_process, 1);
      EXPECT_EQ(r.algorithm, "nvls");
    }
  }
  EXPECT_EQ(m.tables[0].nccl_version, "2.19.3+cuda12.3");
  EXPECT_EQ(m.tables[0].rows[0].dtype, "bf16");
  EXPECT_EQ(m.tables[1].rows[0].dtype, "fp32");
  EXPECT_EQ(m.rows.size(), 6u);
  EXPECT_DOUBLE_EQ(m.rows[2].measured_us, 108.93);
  EXPECT_DOUBLE_EQ(m.rows[5].in_place_us, 12.81);
  EXPECT_NE(m.rows[0].system, m.rows[3].system);  // the tables are separate runs
}

TEST(NcclTestsLog, RoundTripsThroughTheCsvFormat) {
  const MeasuredFile m = load_measured(kFixtures / "allreduce-g8-single-process.log");
  const auto back = parse_measured_csv(to_measured_csv(m.rows), "round-trip.csv");
  ASSERT_EQ(back.size(), m.rows.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].system, m.rows[i].system);
    EXPECT_EQ(back[i].gpus, m.rows[i].gpus);
    EXPECT_EQ(back[i].algorithm, m.rows[i].algorithm);
    EXPECT_EQ(back[i].bytes, m.rows[i].bytes);
    EXPECT_EQ(back[i].measured_us, m.rows[i].measured_us);
    EXPECT_EQ(back[i].busbw_GBps, m.rows[i].busbw_GBps);
    EXPECT_EQ(back[i].dtype, m.rows[i].dtype);
    EXPECT_EQ(back[i].gpus_per_process, m.rows[i].gpus_per_process);
    EXPECT_EQ(back[i].notes, m.rows[i].notes);
    EXPECT_EQ(back[i].in_place_us, m.rows[i].in_place_us);
  }
  EXPECT_GT(m.rows[0].in_place_us, 0);
}

TEST(NcclTestsLog, MalformedLogsNameTheLine) {
  const std::string good = read(kFixtures / "allreduce-g8-single-process.log");
  auto replace_line = [&](int line, const std::string& text) {
    std::istringstream in(good);
    std::string out, l;
    for (int n = 1; std::getline(in, l); ++n) out += (n == line ? text : l) + "\n";
    return out;
  };
  // A row with a column missing.
  EXPECT_NE(error_of([&] { parse_nccl_tests(replace_line(22, "         128            32     float     sum      -1    31.44    0.00    0.01      0    31.13    0.00    0.01"), "x.log"); })
                .find("x.log:22: expected 9 or 13 columns"),
            std::string::npos);
  // size != count x element size.
  EXPECT_NE(error_of([&] { parse_nccl_tests(replace_line(23, "         512           100     float     sum      -1    31.80    0.02    0.03      0    31.58    0.02    0.03      0"), "x.log"); })
                .find("x.log:23: size 512 is not count 100 x 4 bytes"),
            std::string::npos);
  // A time that is not a number.
  EXPECT_NE(error_of([&] { parse_nccl_tests(replace_line(24, "        2048           512     float     sum      -1    fast    0.06    0.11      0    31.92    0.06    0.11      0"), "x.log"); })
                .find("x.log:24: out-of-place time: 'fast'"),
            std::string::npos);
  // Stray text among the rows is no row: skipped and listed with its line, the rows around it kept.
  std::vector<std::string> ignored;
  const auto tables = parse_nccl_tests(replace_line(25, "Segmentation fault (core dumped)"), "x.log", &ignored);
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0], "x.log:25: Segmentation fault (core dumped)");
  EXPECT_EQ(tables.at(0).rows.size(), 12u);  // 13 rows, one replaced
  // A line whose first two fields are numbers is a row, and a malformed one is an error.
  EXPECT_NE(error_of([&] { parse_nccl_tests(replace_line(25, "  4096  1024  float  sum  -1  12.0  0.3"), "x.log"); })
                .find("x.log:25: expected 9 or 13 columns"),
            std::string::npos);
  // Rows without the header or device list that gives the rank count, and bandwidths too
  // small to tell it.
  EXPECT_NE(error_of([&] { parse_nccl_tests("           8             2     float     sum      -1    31.52    0.00    0.00      0\n", "y.log"); })
                .find("y.log:1: no '# nThread ... nGpus ...' header nor '# Using devices' list before this table"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_nccl_tests("# nothing here\n", "z.log"); }).find("no nccl-tests data rows"),
            std::string::npos);
}

// Layouts of real public all_reduce_perf logs (seen on 2026-12-05 in logs pasted in GitHub
// issues and guides; the text below is written for the test, numbers illustrative).

// Several runs in one file: each table takes the settings of its own command, and NCCL's
// report of them, not those written after its rows (the next run's command); an `export`
// carries over to later runs, after a shell prompt too. A variable that merely ends in
// NCCL_... sets nothing.
TEST(NcclTestsLog, EachTableTakesItsOwnRunsSettings) {
  const std::string table = R"(#
# Using devices
#  Rank  0 Group  0 Pid  7001 on nodeA device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  7002 on nodeA device  1 [0x2a] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   134217728      33554432     float     sum      -1   1200.0  111.85  111.85      0   1201.0  111.76  111.76      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 111.8
)";
  const std::string header = "# nThread 1 nGpus 1 minBytes 134217728 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n";
  const std::string text = "$ mpirun -np 2 -x UCC_TL_NCCL_TUNE=0 ./build/all_reduce_perf -b 128M -e 128M\n" + header + table +
                           "\n**Config B**\n\n$ NCCL_ALGO=Ring mpirun -np 2 ./build/all_reduce_perf -b 128M -e 128M\n" + header +
                           "nodeA:7101:7101 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n" + table +
                           "[root@nodeA ~]# export NCCL_ALGO=NVLS\n" + header + table +
                           // (NCCL's report after a table's rows: the next run's, as it starts)
                           "nodeA:7301:7301 [0] NCCL INFO NCCL_PROTO set by environment to LL128\n" + header + table;
  const auto t = parse_nccl_tests(text, "runs.log");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_TRUE(t[0].env.empty()) << "the first run has no NCCL setting: " << t[0].env.begin()->first;
  EXPECT_EQ(t[1].env.size(), 2u);
  EXPECT_EQ(t[1].env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(t[1].env.at("NCCL_PROTO"), "Simple");
  EXPECT_EQ(t[1].rows.at(0).algorithm, "ring-simple");  // NCCL_PROTO fixes the ring's protocol
  EXPECT_EQ(t[0].rows.at(0).algorithm, "nccl-auto");
  EXPECT_EQ(t[2].env.size(), 1u);  // (Ring was the second command's own)
  EXPECT_EQ(t[2].env.at("NCCL_ALGO"), "NVLS");
  EXPECT_EQ(t[2].rows.at(0).algorithm, "nvls");
  EXPECT_EQ(t[3].env.size(), 2u);
  EXPECT_EQ(t[3].env.at("NCCL_PROTO"), "LL128");
  EXPECT_EQ(t[3].env.at("NCCL_ALGO"), "NVLS");
}

// The NCCL version from nccl-tests' own header (its library's version code) where NCCL
// prints none; NCCL's "NCCL version" line, where there is one, says more.
TEST(NcclTestsLog, NcclVersionFromTheLibraryCode) {
  const std::string rows = R"(# nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  900 on host device  0 [0x18] NVIDIA H100 NVL
#  Rank  1 Group  0 Pid  900 on host device  1 [0x2a] NVIDIA H100 NVL
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.10   52.17   52.17      0
)";
  EXPECT_EQ(parse_nccl_tests("# nccl-tests version 2.18.3 nccl-headers=23005 nccl-library=23005\n# Collective test starting: all_reduce_perf\n" + rows, "a.log")
                .at(0).nccl_version, "2.30.5");
  EXPECT_EQ(parse_nccl_tests("# nccl-tests version 2.10.0 nccl-headers=2804 nccl-library=2804\n" + rows, "b.log").at(0).nccl_version,
            "2.8.4");  // (before NCCL 2.9: major x 1000)
  const auto t = parse_nccl_tests("# nccl-tests version 2.18.3 nccl-headers=23004 nccl-library=23004\n" + rows +
                                      "host:900:900 [0] NCCL INFO NCCL version 2.30.4+cuda13.2\n",
                                  "c.log");
  EXPECT_EQ(t.at(0).nccl_version, "2.30.4");  // (NCCL's line after the rows is a later run's)
  const auto u = parse_nccl_tests("# nccl-tests version 2.18.3 nccl-headers=23004 nccl-library=23004\n" +
                                      rows.substr(0, rows.find("#\n#       size")) + "host:900:900 [0] NCCL INFO NCCL version 2.30.4+cuda13.2\n" +
                                      rows.substr(rows.find("#\n#       size")),
                                  "d.log");
  EXPECT_EQ(u.at(0).nccl_version, "2.30.4+cuda13.2");
  EXPECT_NE(u.at(0).rows.at(0).notes.find("NCCL 2.30.4+cuda13.2"), std::string::npos);
}

// Processes are told apart by host and Pid: containers on two hosts reuse Pids.
TEST(NcclTestsLog, ProcessesCountedByHostAndPid) {
  std::string text = "# nThread 1 nGpus 1 minBytes 67108864 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20\n#\n# Using devices\n";
  for (int r = 0; r < 4; ++r)
    text += fmt::format("#   Rank {} Pid {} on pod-{} device {} [0x{}0] NVIDIA A100-SXM4-40GB\n", r, 30 + r % 2, r / 2, r % 2, r);
  text += "#\n#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
          "    67108864      16777216     float     sum    1000.0   67.11  100.66  5e-07    1001.0   67.04  100.56  5e-07\n";
  const auto t = parse_nccl_tests(text, "pods.log");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].ranks, 4);
  EXPECT_EQ(t[0].processes, 4);
  EXPECT_EQ(t[0].rows.at(0).gpus_per_process, 1);
}

// Other tools' output pasted with the log (numactl's distances, an amd-smi table) is no row:
// a row names its type and reduction after its two numbers.
TEST(NcclTestsLog, OtherToolsNumbersAreNoRows) {
  const std::string good = read(kFixtures / "allreduce-g8-single-process.log");
  std::vector<std::string> ignored;
  const auto t = parse_nccl_tests("node distances:\nnode   0   1\n  0:  10  32\n  1:  32  10\n0       3     0x75a3, 5    N/A\n" + good,
                                  "page.log", &ignored);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].rows.size(), 13u);
  ASSERT_GE(ignored.size(), 3u);
  EXPECT_EQ(ignored[2], "page.log:3: 10  32");  // (srun's label rule took "0:" off)
}

// Pasted from '# Using devices' on, or only the column header and rows: the rank count from
// the device list, or from busbw / algbw = 2(n-1)/n where it names one count; each column
// header after rows starts another table.
TEST(NcclTestsLog, TablesWithoutTheThreadHeader) {
  const std::string devices = R"(#
# Using devices
# Rank 0 Group 0 Pid 40 on n1 device 0 [0000:18:00] NVIDIA H100 80GB HBM3
# Rank 1 Group 0 Pid 41 on n1 device 1 [0000:2a:00] NVIDIA H100 80GB HBM3
# Rank 2 Group 0 Pid 42 on n2 device 0 [0000:18:00] NVIDIA H100 80GB HBM3
# Rank 3 Group 0 Pid 43 on n2 device 1 [0000:2a:00] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  1073741824     268435456     float     sum      -1    10000  107.37  161.06    N/A    10010  107.27  160.90    N/A
)";
  const auto a = parse_nccl_tests("export NCCL_ALGO=RING\n" + devices, "devices.log");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].ranks, 4);
  EXPECT_EQ(a[0].processes, 4);
  EXPECT_EQ(a[0].rows.at(0).gpus, 4);
  EXPECT_EQ(a[0].rows.at(0).gpus_per_process, 1);
  EXPECT_EQ(a[0].rows.at(0).algorithm, "ring");
  EXPECT_NE(a[0].rows.at(0).notes.find("no '# nThread' line: GPUs per process from the Pids"), std::string::npos);
  const std::string bare = R"(On one node:
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:  2147483648     536870912     float     sum      -1   8000.0  268.44  469.76      0   8001.0  268.40  469.70      0
On two nodes:
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:  2147483648     536870912     float     sum      -1   9200.0  233.42  437.67      0   9190.0  233.68  438.15      0
)";
  const auto b = parse_nccl_tests(bare, "bare.log");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].rows.at(0).gpus, 8);
  EXPECT_EQ(b[1].rows.at(0).gpus, 16);
  EXPECT_EQ(b[1].first_line, 5);
  EXPECT_NE(b[0].rows.at(0).notes.find("one GPU per process assumed"), std::string::npos);
}

// A table whose header and rows have no #wrong column (time algbw busbw per half).
TEST(NcclTestsLog, ColumnsAsTheHeaderListsThem) {
  const auto t = parse_nccl_tests(R"(# nThread 1 nGpus 8 minBytes 8388608 maxBytes 16777216 step: 2(factor)
#
#       size         count      type   redop    root     time   algbw   busbw
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)
     8388608       2097152     float     sum      -1    80.00  104.86  183.50
    16777216       4194304     float     sum      -1    110.0  152.52  266.91
# Avg bus bandwidth    : 225.2 GB/s
)",
                                  "b200.log");
  ASSERT_EQ(t.size(), 1u);
  ASSERT_EQ(t[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].rows[1].measured_us, 110.0);
  EXPECT_DOUBLE_EQ(t[0].rows[1].busbw_GBps, 266.91);
  EXPECT_EQ(t[0].rows[1].gpus, 8);
  EXPECT_NE(error_of([] {
              parse_nccl_tests("# nThread 1 nGpus 8\n#  size count type redop root time algbw busbw\n 8388608 2097152 float sum -1 80.0 104.86\n", "c.log");
            }).find("c.log:3: expected 8 or 11 columns (size count type redop root time algbw busbw [in-place time algbw busbw]), got 7"),
            std::string::npos);
  // (A header that lists no #wrong over rows that have it: the rows' layout.)
  const auto u = parse_nccl_tests("# nThread 1 nGpus 8\n#  size count type redop root time algbw busbw\n"
                                  " 8388608 2097152 float sum -1 80.0 104.86 183.50 0\n", "d.log");
  EXPECT_DOUBLE_EQ(u.at(0).rows.at(0).busbw_GBps, 183.50);
}

// rccl-tests (AMD's port of nccl-tests) prints the same tables: its rows say so.
TEST(NcclTestsLog, RcclTestsRowsSaySo) {
  const std::string good = read(kFixtures / "allreduce-g8-single-process.log");
  const auto t = parse_nccl_tests("rccl-tests: Version HEAD:0000000\n" + good, "mi.log");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].rows.at(0).notes.rfind("rccl-tests", 0), 0u) << t[0].rows.at(0).notes;
  EXPECT_EQ(parse_nccl_tests(good, "nv.log").at(0).rows.at(0).notes.rfind("nccl-tests", 0), 0u);
}

// The layout of `mpirun` runs of older nccl-tests (no `root` column, `error` for `#wrong`,
// "# Rank" without "Group") with Open MPI's messages among the rows and NCCL_ALGO=^NVLS.
TEST(NcclTestsLog, MpirunMessagesAmongTheRowsAreSkippedAndListed) {
  const MeasuredFile m = load_measured(kFixtures / "allreduce-mpirun-older-format.log");
  ASSERT_NO_FATAL_FAILURE(expect_one_table(m, 4, 4, "NVIDIA A100-SXM4-80GB"));
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[0].gpus, 4);
  EXPECT_EQ(m.rows[0].gpus_per_process, 1);
  EXPECT_EQ(m.rows[0].algorithm, "ring");  // ^NVLS: every algorithm but NVLS; within a node, ring
  EXPECT_DOUBLE_EQ(m.rows[0].measured_us, 41.37);
  EXPECT_DOUBLE_EQ(m.rows[2].in_place_us, 82.77);
  EXPECT_EQ(m.rows[2].source, "allreduce-mpirun-older-format.log:20");
  ASSERT_EQ(m.ignored.size(), 3u);
  EXPECT_EQ(m.ignored[0], "allreduce-mpirun-older-format.log:15: 4 more processes have sent help message "
                          "help-mtl-ofi.txt / OFI call fail");
  EXPECT_EQ(m.ignored[2].rfind("allreduce-mpirun-older-format.log:19: 1 more process", 0), 0u) << m.ignored[2];
}

// NCCL_ALGO as NCCL reads it: a list, or "^" and the algorithms left out.
TEST(NcclTestsLog, NcclAlgoListsAndExclusionsNameTheAlgorithmRun) {
  auto algo_of = [](const std::string& value) {
    const std::string log = "NCCL_ALGO=" + value +
                            "\n# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor)\n"
                            "           8             2     float     sum      -1    31.52    0.00    0.00      0\n";
    return parse_nccl_tests(log, "a.log").at(0).rows.at(0).algorithm;
  };
  EXPECT_EQ(algo_of("NVLS"), "nvls");
  EXPECT_EQ(algo_of("Ring"), "ring");
  EXPECT_EQ(algo_of("Ring,NVLS"), "nccl-auto");
  EXPECT_EQ(algo_of("ring,tree"), "ring");
  EXPECT_EQ(algo_of("^NVLS"), "ring");
  EXPECT_EQ(algo_of("^Ring,Tree"), "nvls");
  EXPECT_EQ(algo_of("^ring,nvls"), "nccl-tree");
  EXPECT_EQ(algo_of("Tree"), "nccl-tree");
  EXPECT_EQ(algo_of("NVLSTree"), "nccl-nvlstree");
  EXPECT_EQ(algo_of("CollNetDirect"), "nccl-collnetdirect");
  // NCCL_PROTO naming one protocol fixes the ring's; a list, or no NCCL_ALGO, leaves NCCL's pick.
  EXPECT_EQ(algo_of("Ring NCCL_PROTO=LL128"), "ring-ll128");
  EXPECT_EQ(algo_of("^NVLS NCCL_PROTO=simple"), "ring-simple");
  EXPECT_EQ(algo_of("Ring NCCL_PROTO=LL,Simple"), "ring");
  EXPECT_EQ(algo_of("NVLS NCCL_PROTO=Simple"), "nvls");
  EXPECT_EQ(algo_of("Ring,NVLS NCCL_PROTO=LL"), "nccl-auto");
}

// The ring's fixed-protocol row names and ring.protocol's values are one table: every key names a
// row that maps back to it, the file spellings of those rows land on it, and nothing else does.
TEST(MeasuredNames, RingRowNamesAndProtocolKeysRoundTrip) {
  ASSERT_EQ(std::size(kRingProtocolKeys), 3u);
  for (const char* key : kRingProtocolKeys) {
    const std::string row = ring_algorithm_for(key);
    EXPECT_EQ(row, std::string("ring-") + key);
    ASSERT_NE(ring_protocol_of(row), nullptr) << row;
    EXPECT_STREQ(ring_protocol_of(row), key);
    EXPECT_EQ(canonical_algorithm(std::string("nccl-ring/") + key), row);
    Config c;
    EXPECT_NO_THROW(set_param(c, "ring.protocol", key)) << key;
  }
  for (const char* other : {"ring", "ring-", "ring-auto", "ring-ll1280", "nvls", "xring-ll", "ring-LL"})
    EXPECT_EQ(ring_protocol_of(other), nullptr) << other;
}

// Names as other files write them: headers in any case and under other names, algorithm
// and element-type spellings of NCCL, nccl-tests and PyTorch users.
TEST(MeasuredCsv, HeadersAlgorithmsAndTypesAsOtherFilesWriteThem) {
  const std::string csv =
      "Platform,World_Size,Algo,Size,Latency_us,Type\n"
      "DGX H100,8,Ring,1024,20.5,float\n"
      "DGX H100,8,NVLS,4194304,60,bfloat16\n"
      "DGX H100,8,auto,8,15,half\n"
      "DGX H100,4,one_shot,1024,9,Float32\n"
      "DGX H100,8,Two Shot,1024,9,fp16\n"
      "DGX H100,8,NCCL_RING_LL128,1048576,40,BF16\n"
      "DGX H100,8,Tree,1048576,40,float\n"
      "DGX H100,8,scin-inq,1048576,40,float\n";
  const auto rows = parse_measured_csv(csv, "o.csv");
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0].system, "DGX H100");
  EXPECT_EQ(rows[0].gpus, 8);
  EXPECT_EQ(rows[3].gpus, 4);
  EXPECT_EQ(rows[1].bytes, 4194304u);
  EXPECT_DOUBLE_EQ(rows[1].measured_us, 60);
  const std::vector<std::string> algos = {"ring", "nvls", "nccl-auto", "one-shot", "two-shot", "ring-ll128", "nccl-tree", "scin-inq"};
  const std::vector<std::string> types = {"fp32", "bf16", "fp16", "fp32", "fp16", "bf16", "fp32", "fp32"};
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k].algorithm, algos[k]) << k;
    EXPECT_EQ(rows[k].dtype, types[k]) << k;
  }
  // Such a file is recognised as CSV by its header alone.
  const fs::path f = temp_file("scin-other-names.csv", csv);
  EXPECT_EQ(load_measured(f).format, "csv");
  fs::remove(f);
}

// Rows timed through NCCL's symmetric kernels (torch --sym-mem) are NCCL's pick among its
// one-shot and two-shot kernels, whatever the file's algorithm column assumed; a row that
// forced one kernel (NCCL_SYM_KERNEL) or names another algorithm keeps its label.
TEST(MeasuredCsv, SymmetricKernelRowsAreNcclsChoiceNotOneShot) {
  const std::string csv =
      "system,gpus,algorithm,bytes,measured_us,notes\n"
      "HGX H200 (lab sym-mem latency),8,one-shot,1048576,16.3,torch --sym-mem\n"
      "Lab,8,one_shot,1024,9,NCCL 2.30 Symmetric Kernels\n"
      "Lab sym-mem,8,one-shot,1024,9,NCCL_SYM_KERNEL=AllReduce_AGxLL_R\n"
      "Lab sym-mem,8,two-shot,1024,9,\n"
      "Lab,8,SYM-MEM,1024,9,\n"
      "Lab,8,one-shot,1024,9,custom kernel\n";
  const auto rows = parse_measured_csv(csv, "s.csv");
  ASSERT_EQ(rows.size(), 6u);
  const std::vector<std::string> algos = {"nccl-sym", "nccl-sym", "one-shot", "two-shot", "nccl-sym", "one-shot"};
  for (std::size_t k = 0; k < rows.size(); ++k) EXPECT_EQ(rows[k].algorithm, algos[k]) << k;
  EXPECT_NE(rows[0].notes.find("read as nccl-sym"), std::string::npos) << rows[0].notes;
  EXPECT_EQ(rows[4].notes.find("read as nccl-sym"), std::string::npos) << rows[4].notes;
  // Written and read again, a row stays what it was, its notes not said twice.
  const auto again = parse_measured_csv(to_measured_csv(rows), "again.csv");
  ASSERT_EQ(again.size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(again[k].algorithm, rows[k].algorithm) << k;
    EXPECT_EQ(again[k].notes, rows[k].notes) << k;
  }
}

// '#' lines above the header (a source, a note) and among the rows are comments; such a file is
// still recognised as CSV, and rows keep their own line numbers.
TEST(MeasuredCsv, CommentLinesAreSkippedAndTheFileIsStillCsv) {
  const std::string csv =
      "# measured on a DGX H100, NCCL 2.21, nccl-tests -g 8\n"
      "\n"
      "system,gpus,algorithm,bytes,measured_us\n"
      "DGX H100,8,ring,1024,20.5\n"
      "# the next size was run twice\n"
      "DGX H100,8,ring,2048,21.0\n";
  const fs::path f = temp_file("scin-commented.csv", csv);
  const MeasuredFile m = load_measured(f);
  EXPECT_EQ(m.format, "csv");
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].source, "scin-commented.csv:4");
  EXPECT_EQ(m.rows[1].source, "scin-commented.csv:6");
  EXPECT_DOUBLE_EQ(m.rows[1].measured_us, 21.0);
  fs::remove(f);
  EXPECT_NE(error_of([] { parse_measured_csv("# only a comment\n", "c.csv"); }).find("c.csv: empty file"), std::string::npos);
}

// A row that gives a bandwidth and no time takes the time the bandwidth implies; a row with
// neither is an error that says so.
TEST(MeasuredCsv, ATimeIsDerivedFromBusbwOrAlgbwWhenTheRowHasNone) {
  const std::string csv =
      "system,gpus,algorithm,bytes,measured_us,busbw_GBps,algbw_GBps\n"
      "h,8,nvls,4294967296,,480,\n"
      "h,8,nvls,4294967296,,,274\n"
      "h,8,ring,1024,12.5,0.1,\n";
  const auto rows = parse_measured_csv(csv, "b.csv");
  ASSERT_EQ(rows.size(), 3u);
  // busbw = algbw x 2(n-1)/n: 480 GB/s at 8 GPUs is algbw 274.29 GB/s, so 4 GiB take 15,658.73 us.
  EXPECT_NEAR(rows[0].measured_us, 15658.73, 0.01);
  EXPECT_DOUBLE_EQ(rows[0].busbw_GBps, 480);
  EXPECT_NEAR(rows[1].measured_us, 4294967296.0 / 274e3, 1e-6);
  EXPECT_DOUBLE_EQ(rows[2].measured_us, 12.5);  // a time given wins over the bandwidths
  // Without a time column at all, busbw alone will do.
  const auto only = parse_measured_csv("system,gpus,algorithm,bytes,busbw\nh,2,ring,1000000,50\n", "c.csv");
  EXPECT_NEAR(only.at(0).measured_us, 1000000.0 / (50.0 * 2 / 2 * 1e3), 1e-9);
  EXPECT_NE(error_of([&] { parse_measured_csv("system,gpus,algorithm,bytes,measured_us,busbw\nh,8,ring,8,,\n", "d.csv"); })
                .find("d.csv:2: measured_us: '' is not a positive number (and no busbw or algbw to derive it from)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_measured_csv("system,gpus,algorithm,bytes,busbw\nh,8,ring,8,0\n", "e.csv"); })
                .find("e.csv:2: busbw: '0' must be positive to give a time"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_measured_csv("system,gpus,algorithm,bytes\nh,8,ring,8\n", "f.csv"); })
                .find("f.csv:1: header lacks column 'measured_us' (or another time column with its unit, e.g. 'time_us'"),
            std::string::npos);
}

// Column names with their units, as spreadsheets and scripts write them: the unit in brackets
// or as the last word, times in any unit, sizes in the CLI's size grammar (K = 1024), bandwidths
// in GB/s or MB/s; a file without an algorithm column is NCCL's choice. Units we cannot read are
// errors that name the column: gigabits, a time without a unit, a size in an unknown unit.
TEST(MeasuredCsv, ColumnUnitsAreReadFromTheHeader) {
  const std::string csv =
      "System,#GPUs,Size (B),Time (us),busbw (GB/s)\n"
      "DGX-A100,8,1048576,40,\n"
      "DGX-A100,8,1G,,230\n";
  const auto rows = parse_measured_csv(csv, "u.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].gpus, 8);
  EXPECT_EQ(rows[0].algorithm, "nccl-auto");
  EXPECT_NE(rows[0].notes.find("no algorithm column"), std::string::npos);
  EXPECT_DOUBLE_EQ(rows[0].measured_us, 40);
  EXPECT_EQ(rows[1].bytes, 1073741824u);
  // busbw 230 GB/s at 8 GPUs: algbw 230 x 8 / 14, so 1 GiB takes 1073741824 / (131.43 x 10^3) us.
  EXPECT_NEAR(rows[1].measured_us, 1073741824.0 / (230.0 * 8 / 14 * 1e3), 1e-9);
  EXPECT_DOUBLE_EQ(rows[1].busbw_GBps, 230);

  // Milliseconds and nanoseconds, a size column in KiB, bandwidth in MB/s, brackets.
  const auto ms = parse_measured_csv(
      "gpu_type,GPU Count,Algo,Message Size [KiB],Latency [ms],algbw [MB/s]\n"
      "H100,8,NVLS,64,0.025,\n"
      "H100,8,NVLS,1024,,200000\n",
      "ms.csv");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].system, "H100");
  EXPECT_EQ(ms[0].bytes, 65536u);
  EXPECT_DOUBLE_EQ(ms[0].measured_us, 25);
  EXPECT_EQ(ms[1].bytes, 1048576u);
  EXPECT_NEAR(ms[1].measured_us, 1048576.0 / (200.0 * 1e3), 1e-9);  // 200,000 MB/s = 200 GB/s algbw
  const auto ns = parse_measured_csv("system,gpus,algorithm,size_KiB,latency_ns\nh,4,ring,2,12500\n", "ns.csv");
  EXPECT_EQ(ns.at(0).bytes, 2048u);
  EXPECT_DOUBLE_EQ(ns.at(0).measured_us, 12.5);

  // What cannot be read is an error naming the column.
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,bytes,busbw (Gb/s)\nh,8,8,1\n", "g.csv"); })
                .find("g.csv:1: column 'busbw (Gb/s)': Gb/s is gigabits per second; give GB/s"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,bytes,time\nh,8,8,1\n", "t.csv"); })
                .find("t.csv:1: column 'time' gives no time unit: name it like 'time_us' or 'time (us)'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,bytes,Time (hours)\nh,8,8,1\n", "h.csv"); })
                .find("h.csv:1: column 'Time (hours)': 'hours' is not a time unit"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,Size (pages),time_us\nh,8,8,1\n", "p.csv"); })
                .find("p.csv:1: column 'Size (pages)': 'pages' is not a size unit"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,size,time_us\nh,8,8X,1\n", "x.csv"); })
                .find("x.csv:2: bytes: '8X' is not a valid size"),
            std::string::npos);

  // Such files are recognised as CSV by their header; a header naming our columns without a GPU
  // count is still read as CSV, so the error says which column is missing (not "no nccl-tests rows").
  const fs::path f = temp_file("scin-units.csv", csv);
  EXPECT_EQ(load_measured(f).format, "csv");
  fs::remove(f);
  const fs::path g = temp_file("scin-no-gpus.csv", "System,Algo,Size (B),Time (us)\nH100,ring,8,10\n");
  EXPECT_NE(error_of([&] { load_measured(g); }).find("scin-no-gpus.csv:1: header lacks column 'gpus'"), std::string::npos);
  fs::remove(g);
}

// A system names an accelerator as a word of its own, in any case.
TEST(Validate, NamesProductAsAWordWithoutCase) {
  EXPECT_TRUE(names_product("HGX B200", "B200"));
  EXPECT_TRUE(names_product("DGX-B200", "B200"));
  EXPECT_TRUE(names_product("dgx b200", "B200"));
  EXPECT_TRUE(names_product("h100", "H100"));
  EXPECT_TRUE(names_product("Dell XE9680 (H100 SXM5)", "H100"));
  EXPECT_TRUE(names_product("H100SXM", "H100"));
  EXPECT_TRUE(names_product("8xH100 SXM", "H100"));
  EXPECT_TRUE(names_product("cluster 16XB200", "B200"));
  EXPECT_FALSE(names_product("ax8xH100", "H100"));
  EXPECT_FALSE(names_product("xH100", "H100"));
  EXPECT_FALSE(names_product("GB200 NVL72", "B200"));
  EXPECT_FALSE(names_product("GH200", "H200"));
  EXPECT_FALSE(names_product("H1000", "H100"));
  EXPECT_FALSE(names_product("H100", ""));
}

// A harness offset belongs to the harness: a row of another system timed by the same harness
// (the same label in brackets) takes it, from any shipped preset's calibration; others do not.
TEST(Validate, AHarnessOffsetGoesWithItsHarness) {
  EXPECT_EQ(harness_label("HGX H200 (stas00 all_reduce_bench)"), "stas00 all_reduce_bench");
  EXPECT_EQ(harness_label("8x B200 ( Stas00 ALL_REDUCE_BENCH )"), "stas00 all_reduce_bench");
  EXPECT_EQ(harness_label("DGX H100"), "");
  const std::map<std::string, double> offsets = {{"HGX H200 (stas00 all_reduce_bench)", 19.5}, {"box (other)", 3}};
  std::string from;
  EXPECT_DOUBLE_EQ(harness_offset_for(offsets, "HGX H200 (stas00 all_reduce_bench)", &from), 19.5);
  EXPECT_DOUBLE_EQ(harness_offset_for(offsets, "HGX B200 (stas00 all_reduce_bench)", &from), 19.5);
  EXPECT_EQ(from, "HGX H200 (stas00 all_reduce_bench)");
  from.clear();
  EXPECT_DOUBLE_EQ(harness_offset_for(offsets, "HGX B200 (stas00 sym-mem latency)", &from), 0);
  EXPECT_EQ(from, "");
  EXPECT_DOUBLE_EQ(harness_offset_for(offsets, "HGX B200", &from), 0);

  // Through the CLI: the H200 harness offset (hgx-h200-8's calibration) applies to an H100 row of
  // that harness on hgx-h100-8, whose own calibration records none; a row of another harness
  // takes none. The model time is the fabric's plus exactly that offset.
  const double h200_offset = preset_harness_offsets("hgx-h200-8").at("HGX H200 (stas00 all_reduce_bench)");
  EXPECT_GT(h200_offset, 10);
  const fs::path f = temp_file("scin-harness.csv",
                               "system,gpus,algorithm,bytes,measured_us\n"
                               "HGX H100 (stas00 all_reduce_bench),8,ring,32768,40\n"
                               "HGX H100 (another harness),8,ring,32768,40\n");
  const auto j = validate_json(f, "--preset hgx-h100-8");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["rows"][0]["harness_offset_us"].get<double>(), h200_offset);
  EXPECT_NE(j["rows"][0]["note"].get<std::string>().find("harness offset of 'HGX H200 (stas00 all_reduce_bench)'"),
            std::string::npos);
  EXPECT_FALSE(j["rows"][1].contains("harness_offset_us"));
  EXPECT_NEAR(j["rows"][0]["model_us"].get<double>() - j["rows"][1]["model_us"].get<double>(), h200_offset, 1e-9);
  EXPECT_DOUBLE_EQ(j["harness_offsets_us"]["HGX H200 (stas00 all_reduce_bench)"].get<double>(), h200_offset);
  fs::remove(f);
}

TEST(MeasuredCsv, ParsesTheReferenceLayoutAndRejectsBadRows) {
  const std::string csv =
      "system,gpus,algorithm,bytes,measured_us,measured_busbw_GBps,dtype,source_url,notes\n"
      "H200 box,8,ring,8,14.9,0.0009396,fp32,https://example.org,\"quoted, with comma\"\n"
      "H200 box,8,nvls,2097152,56.88,,fp32,,\n";
  const auto rows = parse_measured_csv(csv, "m.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].gpus, 8);
  EXPECT_DOUBLE_EQ(rows[0].busbw_GBps, 0.0009396);
  EXPECT_EQ(rows[0].notes, "quoted, with comma; https://example.org");
  EXPECT_DOUBLE_EQ(rows[1].busbw_GBps, -1);
  EXPECT_EQ(rows[1].source, "m.csv:3");
  EXPECT_NE(error_of([] { parse_measured_csv("system,algorithm,bytes,measured_us\nx,ring,8,1\n", "h.csv"); })
                .find("h.csv:1: header lacks column 'gpus'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,algorithm,bytes,measured_us\nx,8,ring,8,1\nx,1,ring,8,1\n", "g.csv"); })
                .find("g.csv:3: gpus: '1' is not a whole number from 2 to 1024"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,algorithm,bytes,measured_us\nx,8,ring,8,-3\n", "t.csv"); })
                .find("t.csv:2: measured_us: '-3' is not a positive number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,algorithm,bytes,measured_us\nx,8,ring\n", "f.csv"); })
                .find("f.csv:2: 3 fields, the header has 5"),
            std::string::npos);
}

TEST(MeasuredCsv, TheLongLayoutTurnsBandwidthsIntoTimes) {
  // The layout of ../shared/reference/hopper-allreduce-anchors.csv: one figure per row.
  const std::string csv =
      "system,gpus,algorithm,message_bytes,metric,value,unit,source\n"
      "h100,8,nvls,4294967296,busbw,480,GB/s,issue 1455\n"
      "h100,8,nvls,4294967296,algbw,274,GB/s,issue 212\n"
      "h100,2,nvls,128,time,5.6,us,issue 1259\n"
      "h100,4,ring,1048576,latency,0.25,ms,x\n";
  const auto rows = parse_measured_csv(csv, "a.csv");
  ASSERT_EQ(rows.size(), 4u);
  // busbw = algbw x 2(n-1)/n: 480 GB/s at 8 GPUs is algbw 274.29 GB/s, so 4 GiB take 15,658.73 us.
  EXPECT_NEAR(rows[0].measured_us, 4294967296.0 / (480.0 * 8 / 14 * 1e3), 1e-6);
  EXPECT_NEAR(rows[0].measured_us, 15658.73, 0.01);
  EXPECT_DOUBLE_EQ(rows[0].busbw_GBps, 480);
  EXPECT_NEAR(rows[1].measured_us, 4294967296.0 / 274e3, 1e-6);
  EXPECT_DOUBLE_EQ(rows[1].busbw_GBps, -1);
  EXPECT_DOUBLE_EQ(rows[2].measured_us, 5.6);
  EXPECT_EQ(rows[2].bytes, 128u);
  EXPECT_DOUBLE_EQ(rows[3].measured_us, 250);
  EXPECT_EQ(rows[3].notes, "x");
  EXPECT_EQ(rows[3].source, "a.csv:5");
  const std::string head = "system,gpus,algorithm,message_bytes,metric,value,unit\n";
  EXPECT_NE(error_of([&] { parse_measured_csv(head + "h,8,ring,8,busbw,10,Gb/s\n", "u.csv"); })
                .find("u.csv:2: unit: 'Gb/s' is not a bandwidth unit for metric 'busbw'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_measured_csv(head + "h,8,ring,8,time,3,min\n", "v.csv"); })
                .find("v.csv:2: unit: 'min' is not a time unit"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_measured_csv(head + "h,8,ring,8,speed,3,us\n", "w.csv"); })
                .find("w.csv:2: metric: 'speed' is not one of time, latency, busbw, algbw"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_measured_csv(head + "h,8,ring,8,time,0,us\n", "z.csv"); })
                .find("z.csv:2: value: '0' is not a positive number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_measured_csv("system,gpus,algorithm,bytes,metric\nh,8,ring,8,time\n", "m.csv"); })
                .find("m.csv:1: header lacks column 'measured_us'"),
            std::string::npos);
}

TEST(MeasuredCsv, TheShippedAnchorsFileLoadsInTheLongLayout) {
  const MeasuredFile m = load_measured(resource_dir() / "measured" / "hopper-allreduce-anchors.csv");
  EXPECT_EQ(m.format, "csv");
  ASSERT_EQ(m.rows.size(), 15u);
  // Row 2 (file line 2): ring at 8 GPUs, 368 GB/s busbw at 4 GiB.
  EXPECT_EQ(m.rows[0].algorithm, "ring");
  EXPECT_NEAR(m.rows[0].measured_us, 4294967296.0 / (368.0 * 8 / 14 * 1e3), 1e-6);
}

TEST(Sha256, MatchesTheFipsTestVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// A fabric whose ring LL time at 8 B is known in closed form:
// launch 2.5 + LL base 4.1 + 14 steps x (0.15 + 2 x 0.125 + 0.2) = 15.0 us
// (links and HBM so fast that the 8 bytes take no measurable time).
Config closed_form_fabric() {
  Config c;
  c.links.bandwidth_GBps = 1e6;
  c.accelerator.hbm_bandwidth_GBps = 1e6;
  c.fabric.gpus = 8;
  c.fabric.planes = 1;
  c.accelerator.launch_overhead_ns = 2500;
  c.links.latency_ns = 125;
  c.sw.latency_ns = 200;
  c.ring.protocol = RingProtocol::LL;
  c.ring.ll = {4100, 150, 0.5};
  return c;
}

// A ring row of 8 B at 8 GPUs, system "hand": closed_form_fabric() models it at 15.0 us.
MeasuredRow hand_row(double measured_us) {
  MeasuredRow a;
  a.system = "hand";
  a.gpus = 8;
  a.algorithm = "ring";
  a.bytes = 8;
  a.measured_us = measured_us;
  return a;
}

TEST(Validate, MapeOfAHandComputedCase) {
  const Config c = closed_form_fabric();
  MeasuredRow a = hand_row(12.5);   // model 15.0: +20%
  MeasuredRow b = a;
  b.measured_us = 20.0;   // model 15.0: -25%
  MeasuredRow big = a;
  big.algorithm = "tree";  // not modelled: reported, not counted
  const ValidationReport rep = validate_rows(c, {a, b, big});
  ASSERT_NEAR(rep.rows[0].model_us, 15.0, 1e-6);
  EXPECT_NEAR(rep.rows[0].error, 0.20, 1e-6);
  EXPECT_NEAR(rep.rows[1].error, -0.25, 1e-6);
  EXPECT_FALSE(rep.rows[2].modelled);
  EXPECT_EQ(rep.overall.rows, 2);
  EXPECT_NEAR(rep.overall.mape_pct, 22.5, 1e-4);
  EXPECT_NEAR(rep.overall.bias_pct, -2.5, 1e-4);
  EXPECT_NEAR(rep.by_regime.at("small").mape_pct, 22.5, 1e-4);
  EXPECT_NEAR(rep.by_algorithm.at("ring").max_abs_pct, 25.0, 1e-4);
  // A harness offset adds to the model: 15 + 5 = 20 matches row b exactly.
  const ValidationReport off = validate_rows(c, {b}, {{"hand", 5.0}});
  EXPECT_NEAR(off.rows[0].error, 0.0, 1e-6);
}

// A run larger than the fabric spans NVLink domains joined by a network the fabric does not
// describe: it is skipped with the reason, not modelled as one bigger domain.
TEST(Validate, RowsLargerThanTheFabricAreSkippedWithTheReason) {
  const Config c = closed_form_fabric();  // 8 GPUs
  MeasuredRow r = hand_row(12.5);
  r.gpus = 16;
  std::string why;
  EXPECT_FALSE(model_time_us(c, r, &why).has_value());
  EXPECT_NE(why.find("16 GPUs exceed the fabric's 8"), std::string::npos) << why;
  EXPECT_NE(why.find("--gpus 16"), std::string::npos) << why;
  Config big = c;
  set_param(big, "fabric.gpus", 16.0);
  EXPECT_TRUE(model_time_us(big, r, &why).has_value());
  r.gpus = 4;  // a part of the domain is modelled
  EXPECT_TRUE(model_time_us(c, r, &why).has_value());
}

TEST(Validate, RegimeBoundaries) {
  EXPECT_EQ(regime_of(64 << 10), Regime::Small);
  EXPECT_EQ(regime_of((64 << 10) + 4), Regime::Mid);
  EXPECT_EQ(regime_of((64ull << 20) - 4), Regime::Mid);
  EXPECT_EQ(regime_of(64ull << 20), Regime::Large);
}

// Rows the model itself generates from `truth`: one system, one algorithm, these sizes.
std::vector<MeasuredRow> generated(const Config& truth, const std::string& system, const std::string& algo,
                                   const std::vector<std::uint64_t>& sizes, int gpus = 8) {
  std::vector<MeasuredRow> rows;
  for (auto b : sizes) {
    MeasuredRow r;
    r.system = system;
    r.gpus = gpus;
    r.algorithm = algo;
    r.bytes = b;
    r.measured_us = *model_time_us(truth, r);
    rows.push_back(r);
  }
  return rows;
}

// Fits `params` from `start` to the rows the model makes from `truth` (one algorithm, these
// sizes, 8 GPUs), without harness offsets: calibration on the model's own data.
FitResult refit_model_rows(const Config& truth, const Config& start, const std::string& algo,
                           const std::vector<std::uint64_t>& sizes, std::vector<std::string> params) {
  FitOptions o;
  o.auto_offsets = false;
  o.params = std::move(params);
  return fit(start, generated(truth, "lab", algo, sizes), o);
}

// Rows generated by the model itself from known parameter values.
std::vector<MeasuredRow> synthetic(const Config& truth) {
  std::vector<MeasuredRow> rows;
  for (const char* algo : {"ring", "nvls"})
    for (int gpus : {4, 8})
      for (auto& r : generated(truth, "synthetic", algo, {8, 4096, 262144, 4ull << 20, 32ull << 20}, gpus))
        rows.push_back(r);
  return rows;
}

TEST(Calibrate, RecoversKnownParametersFromSyntheticData) {
  const Config start = load_preset("hgx-h100-8");
  Config truth = start;
  set_param(truth, "accelerator.launch_overhead_ns", 4000.0);
  set_param(truth, "switch.nvls.sync_overhead_ns", 5000.0);
  set_param(truth, "switch.nvls.efficiency", 0.7);
  FitOptions o;
  o.params = {"accelerator.launch_overhead_ns", "switch.nvls.sync_overhead_ns", "switch.nvls.efficiency"};
  o.auto_offsets = false;
  const FitResult r = fit(start, synthetic(truth), o);
  ASSERT_EQ(r.params.size(), 3u);
  for (const auto& p : r.params) EXPECT_TRUE(p.fitted) << p.path << ": " << p.reason;
  EXPECT_NEAR(r.params[0].value / 4000.0, 1.0, 0.01);
  EXPECT_NEAR(r.params[1].value / 5000.0, 1.0, 0.01);
  EXPECT_NEAR(r.params[2].value / 0.7, 1.0, 0.01);
  EXPECT_LT(r.after.overall.mape_pct, 0.5);
  EXPECT_GT(r.before.overall.mape_pct, 5.0);
  // The confidence interval holds the value.
  for (const auto& p : r.params) {
    EXPECT_LE(p.ci_low, p.value);
    EXPECT_GE(p.ci_high, p.value);
  }
}

// Rows of NCCL's own choice (nccl-auto) are modelled as the algorithm NCCL's tuning model
// picks, which does not depend on the other one's costs: where the fit refuses a parameter at its solution,
// it says which logs would identify both (one per NCCL_ALGO). Rows of one algorithm get no note.
TEST(Calibrate, NcclAutoRowsSayWhichLogsIdentifyBothAlgorithms) {
  const Config start = load_preset("hgx-h200-8");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = 8; b <= (std::uint64_t{2} << 20); b *= 4) sizes.push_back(b);
  sizes.insert(sizes.end(), {std::uint64_t{32} << 20, std::uint64_t{128} << 20});
  auto rows = generated(start, "auto log", "nccl-auto", sizes);
  for (auto& x : rows) x.measured_us *= 1.5;
  FitOptions o;
  o.auto_offsets = false;
  // (Without ring.channels: its fit absorbs the x1.5 through the ring rows' data term, and no
  // parameter is then refused at the solution, which is what this test is about.)
  for (const std::string& p : default_fit_params())
    if (p != "ring.channels") o.params.push_back(p);
  const FitResult r = fit(start, rows, o);
  int late = 0;
  for (const auto& p : r.params) late += p.reason.find("at the solution") != std::string::npos ? 1 : 0;
  ASSERT_GT(late, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("NCCL_ALGO=Ring and with NCCL_ALGO=NVLS"), std::string::npos) << r.notes[0];
  EXPECT_TRUE(fit(start, synthetic(start), o).notes.empty());
}

// NCCL's pick among its symmetric kernels, from its own cost model (src/sym_kernels.cc;
// figures from that model by hand): on 8 Hopper GPUs its LL one-shot costs 4.5 us plus
// 9 x 8 x S bytes at 320 GiB/s, its multimem two-shot 7.8 us plus 1.125 S at 480 GiB/s; the LL
// kernel is chosen up to 16 KiB, the multimem two-shot from 32 KiB; Blackwell's higher fixed
// costs move the switch to 64 KiB; fewer ranks move it up, more down; without multimem the
// plain two-shot (RSxLD_AGxST) takes over.
TEST(NcclSym, PickFollowsNcclsCostModel) {
  auto pick = [](int ranks, std::uint64_t bytes, bool blackwell, bool mc) {
    return nccl_sym_pick(ranks, bytes, blackwell, mc);
  };
  EXPECT_EQ(pick(8, 8, false, true).algorithm, "one-shot");
  EXPECT_EQ(pick(8, 16384, false, true).algorithm, "one-shot");
  EXPECT_EQ(pick(8, 32768, false, true).kernel, "AllReduce_RSxLDMC_AGxSTMC");
  EXPECT_EQ(pick(8, 1 << 20, false, true).algorithm, "two-shot");
  EXPECT_EQ(pick(8, 32768, true, true).algorithm, "one-shot");
  EXPECT_EQ(pick(8, 65536, true, true).algorithm, "two-shot");
  EXPECT_EQ(pick(4, 32768, false, true).algorithm, "one-shot");
  EXPECT_EQ(pick(72, 4096, false, true).algorithm, "two-shot");
  EXPECT_EQ(pick(8, 1 << 20, false, false).kernel, "AllReduce_RSxLD_AGxST");
  EXPECT_EQ(pick(8, 8, false, false).kernel, "AllReduce_AGxLL_R");
  // NCCL's estimates (its softmin of blocks x 65 GiB/s against the peak, softness 65 GiB/s; one
  // block is within 2.5% of the most at both sizes): 8 B on the LL one-shot, 8 x 8 x 9 bus
  // bytes against 320 GiB/s; 1 MiB on the multimem two-shot, 1.125 MiB against 480 GiB/s with
  // its x8 multiplier.
  const double sm = 65.0 * (1 << 30) / 1e6;
  auto soft_min = [&](double x, double c) { return c - sm * std::log1p(std::expm1(c / sm) * std::exp(-x / sm)); };
  EXPECT_NEAR(pick(8, 8, false, false).nccl_model_us, 4.5 + std::log1p(std::exp(576 / soft_min(sm, 320 / 65.0 * sm) - 1)), 1e-9);
  EXPECT_NEAR(pick(8, 1 << 20, false, true).nccl_model_us,
              7.8 + std::log1p(std::exp(1.125 * (1 << 20) / soft_min(8 * sm, 480 / 65.0 * sm) - 1)), 1e-9);
  EXPECT_NEAR(pick(8, 8, false, false).nccl_model_us, 4.8155, 1e-4);
  EXPECT_NEAR(pick(8, 1 << 20, false, true).nccl_model_us, 9.4453, 1e-4);
  EXPECT_THROW(pick(1, 8, false, true), Error);
  EXPECT_THROW(pick(8, 0, false, true), Error);
  // On a fabric: the accelerator's name says Blackwell, the switch's NVLS says multimem.
  Config b200 = load_preset("hgx-b200-8"), a100 = load_preset("hgx-a100-8");
  EXPECT_EQ(nccl_sym_pick(b200, 32768).algorithm, "one-shot");
  EXPECT_EQ(nccl_sym_pick(a100, 1 << 20).kernel, "AllReduce_RSxLD_AGxST");
}

// ring.channels is identified by where the ring's time stops being flat (the model's own data,
// not validation): rows made with 10 channels give 10 back from a start at 16.
TEST(Calibrate, RingChannelsAreIdentifiedByWhereTheMidSizesStopBeingFlat) {
  Config truth = load_preset("hgx-h200-8");
  set_param(truth, "ring.channels", 10.0);
  Config start = load_preset("hgx-h200-8");
  set_param(start, "ring.channels", 16.0);
  set_param(start, "ring.ll.base_ns", 5000.0);
  const FitResult r = refit_model_rows(truth, start, "ring-ll", {8, 1024, 32768, 131072, 262144, 524288, 1ull << 20, 2ull << 20},
                                       {"ring.ll.base_ns", "ring.channels"});
  ASSERT_EQ(r.params.size(), 2u);
  for (const auto& p : r.params) ASSERT_TRUE(p.fitted) << p.path << ": " << p.reason;
  EXPECT_NEAR(r.params[0].value, truth.ring.ll.base_ns, 0.01 * truth.ring.ll.base_ns);
  EXPECT_NEAR(r.params[1].value, 10.0, 0.2);
}

// NCCL's own choice of algorithm and protocol, from its tuning model (src/tuning/ring.cc,
// tree.cc, nvls.cc; figures by hand). 8 Hopper GPUs at NCCL's 370.8 GB/s: ring LL costs
// 6.6 + 14 x 0.6 = 15.0 us at min(141, 370.8 / 2) x 8/14 = 80.57 GB/s, NVLS 25 us at
// 370.8 x 0.85 x 15/16 x 2 x 8/14 = 337.69 GB/s: they cross at 10 us / (1/80.57 - 1/337.69)
// = 1.058 MB. Without NVLS ring LL128 (40.6 us, 194.94 GB/s) takes over at 3.52 MB and Simple
// (56.0 us, 211.89 GB/s) at 37.5 MB. Ampere (240 GB/s, LL capped at 87.7): LL -> LL128 at
// 2.13 MB, LL128 -> Simple at 24.3 MB. Blackwell (721.8 GB/s, LL cap 282, NVLS efficiency
// 0.74): ring LL -> NVLS at 2.24 MB. At 72 ranks the ring's 142 steps make NVLS the pick from
// 8 B; at 2 ranks (no NVLS) ring Simple beats LL128 at every size and LL up to 1.68 MB.
TEST(NcclAuto, PickFollowsNcclsTuningModel) {
  auto pick = [](int ranks, double bus, GpuGeneration g, bool nvls, std::uint64_t bytes) {
    return nccl_auto_pick(NcclTunerInput{ranks, bus, g, nvls}, bytes);
  };
  const auto H = GpuGeneration::Hopper, A = GpuGeneration::Ampere, B = GpuGeneration::Blackwell;
  const double h = 370.8, a = 240.0, b = 721.8;
  EXPECT_EQ(pick(8, h, H, true, 8).algorithm, "ring-ll");
  EXPECT_NEAR(pick(8, h, H, true, 8).nccl_model_us, 15.0 + 8 / (1000 * 141.0 * 8 / 14), 1e-6);
  EXPECT_EQ(pick(8, h, H, true, 1000000).algorithm, "ring-ll");
  EXPECT_EQ(pick(8, h, H, true, 1100000).algorithm, "nvls");
  EXPECT_EQ(pick(8, h, H, true, 1100000).nccl_algorithm, "NVLS");
  EXPECT_NEAR(pick(8, h, H, true, 1ull << 30).nccl_model_us,
              25.0 + double(1ull << 30) / (1000 * h * 0.85 * 15 / 16 * 2 * 8 / 14), 1e-3);
  EXPECT_EQ(pick(8, h, H, false, 3400000).algorithm, "ring-ll");
  EXPECT_EQ(pick(8, h, H, false, 3600000).algorithm, "ring-ll128");
  EXPECT_EQ(pick(8, h, H, false, 37000000).algorithm, "ring-ll128");
  EXPECT_EQ(pick(8, h, H, false, 38000000).nccl_protocol, "Simple");
  EXPECT_EQ(pick(8, a, A, false, 2097152).algorithm, "ring-ll");
  EXPECT_EQ(pick(8, a, A, false, 2200000).algorithm, "ring-ll128");
  EXPECT_EQ(pick(8, a, A, false, 16ull << 20).algorithm, "ring-ll128");
  EXPECT_EQ(pick(8, a, A, false, 32ull << 20).algorithm, "ring-simple");
  EXPECT_EQ(pick(8, b, B, true, 2200000).algorithm, "ring-ll");
  EXPECT_EQ(pick(8, b, B, true, 2300000).algorithm, "nvls");
  EXPECT_EQ(pick(72, b, B, true, 8).algorithm, "nvls");
  EXPECT_EQ(pick(2, h, H, false, 1600000).algorithm, "ring-ll");
  EXPECT_EQ(pick(2, h, H, false, 1750000).algorithm, "ring-simple");
  // Tree never wins within one NVLink domain of up to 16 GPUs (its LL runs at a quarter of the
  // ring's LL and its other protocols pay the mid-size correction factors), at any size or
  // generation; at 72 GPUs without NVLS its lower per-step latency (1.25 against 1.9 us) wins at
  // one size: Tree/LL128 at 16 MiB (Ampere), 32 MiB (Hopper), 64 MiB (Blackwell).
  for (GpuGeneration g : {A, H, B})
    for (int n : {2, 3, 4, 8, 16})
      for (std::uint64_t s = 8; s <= (16ull << 30); s *= 2)
        for (bool nvls : {false, true})
          EXPECT_NE(pick(n, g == A ? a : g == H ? h : b, g, nvls, s).nccl_algorithm, "Tree") << n << " " << s;
  EXPECT_EQ(pick(72, h, H, false, 32ull << 20).nccl_algorithm, "Tree");
  EXPECT_EQ(pick(72, h, H, false, 32ull << 20).algorithm, "ring-ll128");
  EXPECT_EQ(pick(72, h, H, false, 16ull << 20).nccl_algorithm, "Ring");
  EXPECT_EQ(pick(72, h, H, true, 32ull << 20).nccl_algorithm, "NVLS");
  EXPECT_THROW(pick(1, h, H, true, 8), Error);
  EXPECT_THROW(pick(8, h, H, true, 0), Error);
  EXPECT_THROW(pick(8, 0, H, true, 8), Error);
  // On a fabric: the generation from the accelerator's name, NCCL's per-link constant over the
  // line rate (not the fitted links.efficiency), NVLS where the switch has it and NCCL runs it.
  EXPECT_EQ(nccl_generation("A100"), A);
  EXPECT_EQ(nccl_generation("H200"), H);
  EXPECT_EQ(nccl_generation("GB200"), B);
  EXPECT_EQ(nccl_generation("B200"), B);
  Config h200 = load_preset("hgx-h200-8");
  EXPECT_NEAR(nccl_tuner_input(h200).nvlink_GBps, 450 * 20.6 / 25, 1e-9);
  EXPECT_TRUE(nccl_tuner_input(h200).nvls);
  set_param(h200, "links.efficiency", 0.5);
  EXPECT_NEAR(nccl_tuner_input(h200).nvlink_GBps, 450 * 20.6 / 25, 1e-9);
  set_param(h200, "fabric.gpus", 2.0);
  EXPECT_FALSE(nccl_tuner_input(h200).nvls);
  const Config a100 = load_preset("hgx-a100-8"), b200 = load_preset("hgx-b200-8");
  EXPECT_FALSE(nccl_tuner_input(a100).nvls);
  EXPECT_EQ(nccl_tuner_input(b200).generation, B);
  EXPECT_NEAR(nccl_tuner_input(a100).nvlink_GBps, 240.0, 1e-9);
  // Over a run's sizes, runs of one pick joined.
  const std::vector<std::string> runs = nccl_choice_runs(load_preset("hgx-h200-8"), {8, 1024, 1 << 20, 2 << 20, 1 << 30});
  EXPECT_EQ(runs, (std::vector<std::string>{"Ring/LL 8 B - 1 MiB", "NVLS/Simple 2 MiB - 1 GiB"}));
  EXPECT_EQ(nccl_choice_runs(a100, {8}), std::vector<std::string>{"Ring/LL 8 B"});
  EXPECT_TRUE(nccl_choice_runs(a100, {}).empty());
}

// nccl-auto rows: NCCL's pick on our engines, with a note naming it. On 8 B200 GPUs at 8 B our
// NVLS is faster than our ring LL, but NCCL runs ring LL there (its model gives NVLS 25 us).
TEST(Validate, NcclAutoIsTheAlgorithmAndProtocolNcclsTunerPicks) {
  auto time_of = [](const Config& c, const std::string& algo, std::uint64_t bytes, std::string* note = nullptr) {
    MeasuredRow r;
    r.system = "lab";
    r.gpus = c.fabric.gpus;
    r.bytes = bytes;
    r.algorithm = algo;
    const auto t = model_time_us(c, r, nullptr, "analytic", note);
    EXPECT_TRUE(t.has_value()) << algo << " " << bytes;
    return t.value_or(0);
  };
  const Config b200 = load_preset("hgx-b200-8"), h200 = load_preset("hgx-h200-8"), a100 = load_preset("hgx-a100-8");
  std::string note;
  EXPECT_DOUBLE_EQ(time_of(b200, "nccl-auto", 8, &note), time_of(b200, "ring-ll", 8));
  EXPECT_LT(time_of(b200, "nvls", 8), time_of(b200, "ring-ll", 8));
  EXPECT_NE(note.find("modelled as ring-ll: NCCL's tuning model picks Ring/LL"), std::string::npos) << note;
  EXPECT_DOUBLE_EQ(time_of(b200, "nccl-auto", 4ull << 20), time_of(b200, "nvls", 4ull << 20));
  EXPECT_DOUBLE_EQ(time_of(h200, "nccl-auto", 1ull << 20), time_of(h200, "ring-ll", 1ull << 20));
  EXPECT_DOUBLE_EQ(time_of(h200, "nccl-auto", 64ull << 20, &note), time_of(h200, "nvls", 64ull << 20));
  EXPECT_NE(note.find("modelled as nvls: NCCL's tuning model picks NVLS/Simple"), std::string::npos) << note;
  EXPECT_DOUBLE_EQ(time_of(a100, "nccl-auto", 16ull << 20), time_of(a100, "ring-ll128", 16ull << 20));
  EXPECT_DOUBLE_EQ(time_of(a100, "nccl-auto", 64ull << 20), time_of(a100, "ring-simple", 64ull << 20));
}

// Ring rows (NCCL_ALGO=Ring): NCCL picks the protocol by its model. On 8 H200 GPUs at 4 MiB
// NCCL's model runs LL128 (its LL -> LL128 switch without NVLS is at 3.52 MB), where our engines
// find LL faster: the row is modelled with LL128 and says so; elsewhere the two agree and the row
// is our ring, with no note. A preset that fixes ring.protocol keeps it.
TEST(Validate, RingRowsRunTheProtocolNcclsTunerPicks) {
  Config c = load_preset("hgx-h200-8");
  auto row = [](std::uint64_t bytes, const std::string& algo) {
    MeasuredRow r;
    r.system = "lab";
    r.gpus = 8;
    r.bytes = bytes;
    r.algorithm = algo;
    return r;
  };
  std::string note;
  const double ll = *model_time_us(c, row(4ull << 20, "ring-ll")), ll128 = *model_time_us(c, row(4ull << 20, "ring-ll128"));
  ASSERT_LT(ll, ll128);
  EXPECT_DOUBLE_EQ(*model_time_us(c, row(4ull << 20, "ring"), nullptr, "analytic", &note), ll128);
  EXPECT_NE(note.find("modelled as ring-ll128: NCCL's tuning model picks Ring/LL128"), std::string::npos) << note;
  EXPECT_NE(note.find("our fastest is LL"), std::string::npos) << note;
  for (std::uint64_t bytes : {8ull, 1ull << 20, 32ull << 20, 1ull << 30}) {
    note.clear();
    const std::string pick = nccl_ring_pick(c, bytes).algorithm;
    EXPECT_DOUBLE_EQ(*model_time_us(c, row(bytes, "ring"), nullptr, "analytic", &note), *model_time_us(c, row(bytes, pick)));
    EXPECT_TRUE(note.empty()) << bytes << ": " << note;
  }
  // A row asked for its note is costed once where our fastest protocol is NCCL's pick: the same
  // time, to the bit, as the row without a note (the ring with the picked protocol), on both
  // engines and where the picks differ (4 MiB).
  for (const char* engine : {"analytic", "packet"})
    for (std::uint64_t bytes : {8ull, 65536ull, 1ull << 20, 4ull << 20}) {
      note.clear();
      const double with_note = *model_time_us(c, row(bytes, "ring"), nullptr, engine, &note);
      EXPECT_EQ(with_note, *model_time_us(c, row(bytes, "ring"), nullptr, engine)) << engine << " " << bytes;
      EXPECT_EQ(with_note, *model_time_us(c, row(bytes, nccl_ring_pick(c, bytes).algorithm), nullptr, engine))
          << engine << " " << bytes;
      EXPECT_EQ(note.empty(), bytes != (4ull << 20)) << engine << " " << bytes << ": " << note;
    }
  set_param(c, "ring.protocol", "ll");
  note.clear();
  EXPECT_DOUBLE_EQ(*model_time_us(c, row(4ull << 20, "ring"), nullptr, "analytic", &note), ll);
  EXPECT_TRUE(note.empty()) << note;
}

// A row of one process driving 8 GPUs (nccl-tests -g 8) is modelled with its launches
// serialised (accelerator.gpus_per_process; docs/model.md "Mid-size regime"): GPU r starts
// r x launch_serial_ns late, so at 8 B the ring takes 7 x 2 us more than the same row of one
// process per GPU, and both engines agree.
TEST(Validate, RowsOfOneProcessDrivingSeveralGpusPayTheSerialisedLaunches) {
  const Config c = load_preset("hgx-h200-8");
  MeasuredRow r;
  r.system = "lab";
  r.gpus = 8;
  r.bytes = 8;
  r.algorithm = "ring";
  const double one = *model_time_us(c, r);
  r.gpus_per_process = 8;
  std::string note;
  const double g8 = *model_time_us(c, r, nullptr, "analytic", &note);
  EXPECT_NEAR(g8 - one, 7 * c.tuning.launch_serial_ns / 1e3, 0.05) << one << " -> " << g8;
  EXPECT_NE(note.find("one process driving 8 GPUs (nccl-tests -g 8) serialised"), std::string::npos) << note;
  EXPECT_NEAR(*model_time_us(c, r, nullptr, "packet"), g8, 0.01 * g8);
  r.gpus_per_process = 4;  // two processes of 4: GPU r starts (r mod 4) x 2 us late
  EXPECT_NEAR(*model_time_us(c, r) - one, 3 * c.tuning.launch_serial_ns / 1e3, 0.05);
}

// nccl-sym rows: the family of NCCL's pick on our engines, with a note naming the kernel.
TEST(Validate, NcclSymIsTheKernelFamilyNcclPicks) {
  const Config c = load_preset("hgx-h200-8");
  for (std::uint64_t bytes : {8ull, 16384ull, 32768ull, 262144ull, 1ull << 20, 64ull << 20}) {
    MeasuredRow r;
    r.system = "lab";
    r.gpus = 8;
    r.bytes = bytes;
    const std::string family = nccl_sym_pick(c, bytes).algorithm;
    r.algorithm = family;
    const double expected = *model_time_us(c, r);
    r.algorithm = "nccl-sym";
    std::string note;
    const auto sym = model_time_us(c, r, nullptr, "analytic", &note);
    ASSERT_TRUE(sym.has_value()) << bytes;
    EXPECT_DOUBLE_EQ(*sym, expected) << bytes;
    EXPECT_NE(note.find("modelled as " + family), std::string::npos) << bytes << ": " << note;
    EXPECT_NE(note.find(nccl_sym_pick(c, bytes).kernel), std::string::npos) << note;
  }
  // At 32 KiB NCCL already runs its two-shot although our one-shot would be faster there.
  MeasuredRow r;
  r.system = "lab";
  r.gpus = 8;
  r.algorithm = "one-shot";
  r.bytes = 32768;
  const double one = *model_time_us(c, r);
  r.algorithm = "two-shot";
  const double two = *model_time_us(c, r);
  r.algorithm = "nccl-sym";
  EXPECT_LT(one, two);
  EXPECT_DOUBLE_EQ(*model_time_us(c, r), two);
}

// The sizes where each kernel wins identify each one's fixed cost: rows the model makes from
// known costs give them back (calibration on the model's own data, not validation).
TEST(Calibrate, NcclSymRowsIdentifyOneShotAndTwoShotFixedCosts) {
  Config truth = load_preset("hgx-h200-8");
  set_param(truth, "one_shot.base_ns", 5200.0);
  set_param(truth, "two_shot.base_ns", 7600.0);
  Config start = load_preset("hgx-h200-8");
  set_param(start, "one_shot.base_ns", 4000.0);
  set_param(start, "two_shot.base_ns", 4000.0);
  const FitResult r = refit_model_rows(truth, start, "nccl-sym", {8, 64, 1024, 8192, 262144, 1ull << 20, 4ull << 20},
                                       {"one_shot.base_ns", "two_shot.base_ns"});
  ASSERT_EQ(r.params.size(), 2u);
  for (const auto& p : r.params) ASSERT_TRUE(p.fitted) << p.path << ": " << p.reason;
  EXPECT_NEAR(r.params[0].value, 5200.0, 52.0);
  EXPECT_NEAR(r.params[1].value, 7600.0, 76.0);
}

// A per-algorithm link efficiency at 0 means links.efficiency: the fit starts it there, not
// at 1, where the framing ceiling (section 3) makes every row independent of it.
TEST(Calibrate, ALinkEfficiencyThatInheritsStartsFromTheLinksValue) {
  Config truth = load_preset("hgx-h200-8");
  set_param(truth, "two_shot.link_efficiency", 0.7);
  const auto rows = generated(truth, "lab", "two-shot", {8, 262144, 4ull << 20, 64ull << 20});
  Config start = truth;
  set_param(start, "two_shot.link_efficiency", 0.0);
  FitOptions o;
  o.auto_offsets = false;
  o.params = {"two_shot.base_ns", "two_shot.link_efficiency"};
  const FitResult r = fit(start, rows, o);
  ASSERT_EQ(r.params.size(), 2u);
  ASSERT_TRUE(r.params[1].fitted) << r.params[1].reason;
  EXPECT_NEAR(r.params[1].value, 0.7, 0.007);
  EXPECT_NEAR(r.params[0].value, truth.tuning.two_shot_base_ns, truth.tuning.two_shot_base_ns * 0.01);
}

TEST(Calibrate, RefusesParametersTheDataCannotIdentify) {
  const Config start = load_preset("hgx-h100-8");
  std::vector<MeasuredRow> rows;
  for (const auto& r : synthetic(start))
    if (r.algorithm == "ring") rows.push_back(r);
  for (auto& r : rows) r.measured_us *= 1.1;
  FitOptions o;
  // The ISA never runs in a ring; the LL base cost and the launch cost are paid
  // together by every ring-LL kernel, so these rows fix only their sum.
  o.params = {"switch.isa.reduce_GBps", "accelerator.launch_overhead_ns", "ring.ll.base_ns"};
  o.auto_offsets = false;
  // Keep the ring on LL so launch and LL base always appear together.
  Config ll = start;
  set_param(ll, "ring.protocol", "ll");
  const FitResult r = fit(ll, rows, o);
  EXPECT_FALSE(r.params[0].fitted);
  EXPECT_NE(r.params[0].reason.find("barely depend"), std::string::npos) << r.params[0].reason;
  EXPECT_EQ(r.params[0].value, r.params[0].before);
  EXPECT_NE(r.params[1].fitted, r.params[2].fitted);  // one of the pair is kept, the other refused
  const auto& refused = r.params[1].fitted ? r.params[2] : r.params[1];
  EXPECT_NE(refused.reason.find("combination of"), std::string::npos) << refused.reason;
}

TEST(Calibrate, ASingularCovarianceRefusesTheLeastSensitiveParameterNotTheFirstListed) {
  // Small ring-LL rows fix the LL base; the ring ramp only touches the 4 GiB rows, by
  // well under 1%: its two parameters cannot be told apart there (singular covariance).
  const Config truth = load_preset("hgx-h100-8");
  std::vector<MeasuredRow> rows = generated(truth, "lab", "ring", {8, 1024, 32768, 262144});
  for (int gpus : {2, 4, 8})
    for (auto& r : generated(truth, "lab", "ring", {4ull << 30}, gpus)) rows.push_back(r);
  Config start = truth;
  set_param(start, "ring.ll.base_ns", 8000.0);
  FitOptions o;
  o.params = {"ring.ll.base_ns", "ramp.ring.half_bytes", "ramp.ring.exponent"};
  o.auto_offsets = false;
  const FitResult r = fit(start, rows, o);
  ASSERT_EQ(r.params.size(), 3u);
  EXPECT_TRUE(r.params[0].fitted) << r.params[0].reason;
  EXPECT_NEAR(r.params[0].value / get_param_number(truth, "ring.ll.base_ns"), 1.0, 0.01);
  EXPECT_FALSE(r.params[2].fitted && r.params[1].fitted);
  EXPECT_LT(r.after.overall.mape_pct, 0.5);
}

TEST(CalibCli, ValidateReadsALogAndCalibrateRejectsAMalformedOne) {
  auto v = run_cli("validate '" + (kFixtures / "allreduce-g8-single-process.log").string() +
                   "' --preset hgx-h200-8 --format json");
  ASSERT_EQ(v.status, 0) << v.output;
  const auto j = nlohmann::json::parse(v.output);
  EXPECT_EQ(j["rows"].size(), 13u);
  EXPECT_EQ(j["overall"]["rows"].get<int>(), 13);
  const fs::path bad = fs::temp_directory_path() / "scin-calib-bad.log";
  {
    std::ofstream f(bad);
    f << "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor)\n"
         "           8             2     float     sum      -1    abc    0.00    0.00      0\n";
  }
  auto c = run_cli("calibrate '" + bad.string() + "' --preset hgx-h200-8");
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.output.find("scin-calib-bad.log:2: out-of-place time: 'abc'"), std::string::npos) << c.output;
  fs::remove(bad);
}


// Rows the model cannot time are listed with why; statistics of no rows are
// "-" (table), empty (CSV) and null (JSON), never a MAPE of 0%.
// Refitting a calibrated preset on rows that cannot identify one of its fitted parameters
// keeps that value but no longer claims an earlier fit made it; fitted ones say this fit.
TEST(CalibCli, ARefusedParameterDoesNotKeepAnEarlierFitsClaim) {
  const fs::path csv = fs::temp_directory_path() / "scin-calib-ring-only.csv";
  {
    std::ofstream f(csv);
    f << "system,gpus,algorithm,bytes,measured_us\n"
         "lab H200,8,ring,8,16\nlab H200,8,ring,1024,16.2\nlab H200,8,ring,32768,16.9\nlab H200,8,ring,262144,19\n";
  }
  const fs::path out = fs::temp_directory_path() / "scin-calib-ring-only.json";
  auto c = run_cli("calibrate '" + csv.string() + "' --preset hgx-h200-8 --param ring.ll.base_ns,one_shot.base_ns --out '" +
                   out.string() + "'");
  ASSERT_EQ(c.status, 0) << c.output;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  const std::string fitted = j["sources"]["ring.ll.base_ns"], refused = j["sources"]["one_shot.base_ns"];
  EXPECT_EQ(fitted.rfind("calibrated by scin calibrate on scin-calib-ring-only.csv", 0), 0u) << fitted;
  EXPECT_EQ(refused.rfind("not fitted by scin calibrate on scin-calib-ring-only.csv", 0), 0u) << refused;
  EXPECT_NE(refused.find(": not identifiable"), std::string::npos) << refused;
  EXPECT_NE(refused.find("as given to the fit"), std::string::npos) << refused;
  // The shipped preset's own claim for it (its fit on the reference file) is what was replaced.
  EXPECT_EQ(preset_sources("hgx-h200-8").at("one_shot.base_ns").rfind("calibrated by scin calibrate", 0), 0u);
  fs::remove(csv);
  fs::remove(out);
}

TEST(CalibCli, ValidateWithNoModelledRowGivesNoErrorFigures) {
  const fs::path f = fs::temp_directory_path() / "scin-calib-unmodelled.csv";
  {
    std::ofstream out(f);
    out << "system,gpus,algorithm,bytes,measured_us\nX,8,tree,1024,3\n";
  }
  const std::string cmd = "validate '" + f.string() + "' --preset hgx-h200-8 --all-systems";
  auto t = run_cli(cmd);
  ASSERT_EQ(t.status, 0) << t.output;
  EXPECT_NE(t.output.find("skipped: algorithm 'nccl-tree' is not modelled"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("no row was modelled"), std::string::npos) << t.output;
  EXPECT_EQ(t.output.find("0.0"), std::string::npos) << t.output;
  auto j = nlohmann::json::parse(run_cli(cmd + " --format json").output);
  EXPECT_EQ(j["overall"]["rows"].get<int>(), 0);
  EXPECT_TRUE(j["overall"]["mape_pct"].is_null()) << j["overall"].dump();
  auto c = run_cli(cmd + " --format csv");
  EXPECT_NE(c.output.find("\noverall,,,,,,,,,,,0,,"), std::string::npos) << c.output;
  fs::remove(f);
}

// By default validate takes the rows whose system names the preset's accelerator as a word:
// "HGX B200" for hgx-b200-8, not "GB200 NVL72".
TEST(CalibCli, ValidateByDefaultTakesTheAcceleratorAsAWordNotInsideAnother) {
  const fs::path f = temp_file("scin-calib-b200-gb200.csv",
                                "system,gpus,algorithm,bytes,measured_us\n"
                                "HGX B200,8,ring,8,23.5\n"
                                "GB200 NVL72,8,ring,8,20\n"
                                "DGX-B200,4,ring,8,20\n");
  const auto j = validate_json(f, "--preset hgx-b200-8");
  ASSERT_EQ(j["rows"].size(), 2u) << j.dump();
  EXPECT_EQ(j["rows"][0]["system"], "HGX B200");
  EXPECT_EQ(j["rows"][1]["system"], "DGX-B200");
  fs::remove(f);
}

// A suite's log: the other benchmark's table is said on its own line, the All-Reduce one imported.
TEST(CalibCli, ImportSaysWhichTablesOfASuiteItSkipped) {
  const fs::path db = fs::temp_directory_path() / "scin-calib-import-suite.scindb";
  fs::remove(db);
  const std::string log = read(kFixtures / "allreduce-g8-single-process.log");
  const fs::path f = temp_file("scin-suite.log", "$ ./build/all_gather_perf -g 8\n" + log + "$ ./build/all_reduce_perf -g 8\n" + log);
  auto r = run_cli("import '" + f.string() + "' --db '" + db.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("13 measured points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("scin: note: scin-suite.log:2: all_gather_perf's table (13 rows) skipped: scin reads All-Reduce tables only\n"),
            std::string::npos)
      << r.output;
  {  // (the run's spec keeps the skipped table apart from the skipped lines)
    Store s = Store::open(db, Access::ReadOnly);
    const auto runs = s.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].spec["skipped_tables"].size(), 1u);
    EXPECT_EQ(runs[0].spec["ignored_lines"].size(), 2u);
  }
  fs::remove(db);
  fs::remove(f);
}

// Lines of a pasted mpirun log that are no row are said on stderr, and the rows are imported.
TEST(CalibCli, ImportSaysWhichLinesOfALogItSkipped) {
  const fs::path db = fs::temp_directory_path() / "scin-calib-import-noise.scindb";
  fs::remove(db);
  auto r = run_cli("import '" + (kFixtures / "allreduce-mpirun-older-format.log").string() + "' --db '" + db.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("3 measured points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("scin: note: 3 lines of allreduce-mpirun-older-format.log skipped (not nccl-tests rows, or rows there is nothing to model for)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("allreduce-mpirun-older-format.log:16: Set MCA parameter"), std::string::npos) << r.output;
  // (`scin runs`: no scin ranks or threads computed a measured run; its GPUs are its points')
  r = run_cli("runs --db '" + db.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("measured                  3/3      -        -  "), std::string::npos) << r.output;
  // The columns stay aligned under their heads when a name (the file's, 33 characters) is long.
  const std::string head = r.output.substr(0, r.output.find('\n')), row = r.output.substr(r.output.find('\n') + 1);
  EXPECT_EQ(head.find("experiment"), row.find("measured")) << r.output;
  EXPECT_EQ(head.find("started (UTC)"), row.find("20")) << r.output;
  fs::remove(db);
}

// --preset auto: a row goes to the shipped preset of the accelerator its system names, the
// smallest fabric that holds its GPUs; a row naming none is skipped with the reason.
TEST(Validate, PresetForRowIsTheSmallestFabricOfTheNamedAccelerator) {
  std::vector<std::pair<std::string, Config>> presets;
  for (const char* n : {"gb200-nvl72", "hgx-a100-8", "hgx-b200-8", "hgx-h100-8", "hgx-h200-8", "nvl36x2", "nvl576-style"})
    presets.emplace_back(n, load_preset(n));
  auto pick = [&](const std::string& system, int gpus) {
    MeasuredRow r;
    r.system = system;
    r.gpus = gpus;
    const int k = preset_for_row(presets, r);
    return k < 0 ? std::string("none") : presets[static_cast<std::size_t>(k)].first;
  };
  EXPECT_EQ(pick("DGX H100 (nccl-tests)", 8), "hgx-h100-8");
  EXPECT_EQ(pick("HGX A100", 4), "hgx-a100-8");
  EXPECT_EQ(pick("HGX B200", 8), "hgx-b200-8");
  EXPECT_EQ(pick("GB200 NVL72", 72), "gb200-nvl72");      // nvl36x2 also holds 72: the first listed
  EXPECT_EQ(pick("GB200 NVL72", 8), "gb200-nvl72");
  EXPECT_EQ(pick("GB200 NVL576", 144), "nvl576-style");   // the smallest fabric that holds 144
  EXPECT_EQ(pick("GB200 NVL576", 1000), "nvl576-style");  // none holds it: the largest (skipped there)
  EXPECT_EQ(pick("GH200 superchip", 8), "none");          // GH200 names neither H200 nor H100
  EXPECT_EQ(pick("Gaudi 3", 8), "none");
}

TEST(CalibCli, ValidatePresetAutoModelsEachRowOnThePresetOfItsSystem) {
  const fs::path f = temp_file("scin-calib-auto.csv",
                                "system,gpus,algorithm,bytes,measured_us\n"
                                "DGX H100,8,ring,1048576,30\n"
                                "HGX A100,8,ring,67108864,700\n"
                                "GB200 NVL72,72,nvls,67108864,300\n"
                                "Gaudi box,8,ring,8,30\n");
  const auto j = validate_json(f, "--preset auto");
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["preset"], "hgx-h100-8");
  EXPECT_EQ(j["rows"][1]["preset"], "hgx-a100-8");
  EXPECT_EQ(j["rows"][2]["preset"], "gb200-nvl72");
  EXPECT_TRUE(j["rows"][3]["preset"].is_null());
  EXPECT_NE(j["rows"][3]["skipped"].get<std::string>().find("names none of the shipped presets' accelerators"), std::string::npos);
  EXPECT_EQ(j["overall"]["rows"].get<int>(), 3);
  // Each row's model time is the one its preset gives when named.
  const std::vector<std::string> named = {"hgx-h100-8", "hgx-a100-8", "gb200-nvl72"};
  for (std::size_t k = 0; k < named.size(); ++k) {
    const auto jn = validate_json(f, "--preset " + named[k] + " --all-systems");
    EXPECT_DOUBLE_EQ(j["rows"][k]["model_us"].get<double>(), jn["rows"][k]["model_us"].get<double>()) << named[k];
  }
  auto h = run_cli("validate '" + f.string() + "' --preset auto --holdout system");
  EXPECT_EQ(h.status, 2);
  EXPECT_NE(h.output.find("--holdout: give one --preset, not auto"), std::string::npos) << h.output;
  fs::remove(f);
}

TEST(CalibCli, ImportRoundTripsARealFormatLogIntoTheDatabase) {
  const fs::path db = fs::temp_directory_path() / "scin-calib-import.scindb";
  fs::remove(db);
  const fs::path log = fs::path(SCIN_CALIB_FIXTURES) / "allreduce-per-process-two-tables.log";
  auto r = run_cli("import '" + log.string() + "' --db '" + db.string() + "' --tag lab");
  ASSERT_EQ(r.status, 0) << r.output;
  const MeasuredFile m = load_measured(log);
  Store s = Store::open(db, Access::ReadOnly);
  const auto runs = s.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kind, PointKind::Measured);
  EXPECT_EQ(runs[0].status, RunStatus::Done);
  EXPECT_EQ(runs[0].spec["sha256"], m.sha256);
  EXPECT_EQ(runs[0].spec["tables"].size(), 2u);
  const auto pts = s.points(runs[0].id);
  ASSERT_EQ(pts.size(), m.rows.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].kind, PointKind::Measured);
    EXPECT_EQ(pts[i].system, m.rows[i].system);
    EXPECT_EQ(pts[i].algorithm, m.rows[i].algorithm);
    EXPECT_EQ(pts[i].bytes, m.rows[i].bytes);
    EXPECT_EQ(pts[i].gpus, m.rows[i].gpus);
    EXPECT_DOUBLE_EQ(pts[i].measured_us, m.rows[i].measured_us);
    EXPECT_DOUBLE_EQ(pts[i].busbw_GBps, m.rows[i].busbw_GBps);
    EXPECT_EQ(pts[i].source, m.rows[i].source);
    EXPECT_DOUBLE_EQ(pts[i].extra.at("in_place_us").get<double>(), m.rows[i].in_place_us);
  }
  // Its CSV export keeps what import kept (in-place time, GPUs per process,
  // regime, notes: columns of their own) and imports back as the same rows.
  const fs::path csv = fs::temp_directory_path() / "scin-calib-import-export.csv";
  auto e = run_cli(fmt::format("export --db '{}' --run {} --out '{}'", db.string(), runs[0].id, csv.string()));
  ASSERT_EQ(e.status, 0) << e.output;
  {
    std::ifstream in(csv);
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(header, "index,status,message,algorithm,variant,dtype,bytes,gpus,system,measured_us,busbw_GBps,source,"
                      "in_place_us,gpus_per_process,regime,notes");
  }
  const MeasuredFile again = load_measured(csv);
  ASSERT_EQ(again.rows.size(), m.rows.size());
  for (std::size_t i = 0; i < again.rows.size(); ++i) {
    const MeasuredRow &a = again.rows[i], &o = m.rows[i];
    EXPECT_EQ(a.system, o.system);
    EXPECT_EQ(a.algorithm, o.algorithm);
    EXPECT_EQ(a.dtype, o.dtype);
    EXPECT_EQ(a.bytes, o.bytes);
    EXPECT_EQ(a.gpus, o.gpus);
    EXPECT_EQ(a.gpus_per_process, o.gpus_per_process);
    EXPECT_DOUBLE_EQ(a.measured_us, o.measured_us);
    EXPECT_DOUBLE_EQ(a.in_place_us, o.in_place_us);
    EXPECT_DOUBLE_EQ(a.busbw_GBps, o.busbw_GBps);
    EXPECT_EQ(a.notes, o.notes + "; " + o.source);  // (the export's source column: where the row came from)
  }
  fs::remove(csv);
  // A malformed log names its line and writes nothing.
  const fs::path bad = fs::temp_directory_path() / "scin-calib-bad-import.log";
  {
    std::ofstream f(bad);
    f << "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n"
         "           8             2     float     sum      -1    1.0    0.00\n";
  }
  auto b = run_cli("import '" + bad.string() + "' --db '" + db.string() + "'");
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.output.find("scin-calib-bad-import.log:2: expected 8 or 12 columns"), std::string::npos) << b.output;
  EXPECT_EQ(Store::open(db, Access::ReadOnly).list_runs().size(), 1u);
  fs::remove(bad);
  fs::remove(db);
}

// core/calib/compare.h: model vs measured rows for the app's overlay and error charts.
TEST(Compare, RowsMatchTheModelAndTheMeasuredBusbw) {
  const Config c = closed_form_fabric();
  const MeasuredRow a = hand_row(12.5);   // model 15.0 us: +20%
  MeasuredRow big = a;
  big.algorithm = "tree";
  const auto rows = compare_with_model(c, {a, big});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].modelled);
  EXPECT_NEAR(rows[0].model_us, 15.0, 1e-6);
  EXPECT_NEAR(rows[0].error, 0.20, 1e-6);
  EXPECT_EQ(rows[0].regime, Regime::Small);
  // busbw = bytes / time x 2(N-1)/N, with time in ns and bytes per ns = GB/s.
  EXPECT_NEAR(rows[0].measured_busbw_GBps, 8.0 / 12500.0 * 1.75, 1e-12);
  EXPECT_NEAR(rows[0].model_busbw_GBps / (8.0 / 15000.0 * 1.75), 1.0, 1e-6);
  EXPECT_FALSE(rows[1].modelled);
  EXPECT_NE(rows[1].skipped.find("'tree' is not modelled"), std::string::npos) << rows[1].skipped;
  EXPECT_TRUE(std::isnan(rows[1].model_us));
}

// A measured run stored before --sym-mem rows were read as NCCL's symmetric-kernel pick holds
// them as one-shot; read back, they are nccl-sym like a fresh import.
TEST(Compare, StoredSymmetricKernelRowsReadBackAsNcclSym) {
  PointRecord p;
  p.kind = PointKind::Measured;
  p.status = PointStatus::Ok;
  p.system = "HGX H200 (lab sym-mem latency)";
  p.gpus = 8;
  p.algorithm = "one-shot";
  p.bytes = 1 << 20;
  p.measured_us = 16.3;
  PointRecord q = p;
  q.system = "HGX H200 (lab)";
  const auto rows = measured_rows({p, q});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].algorithm, "nccl-sym");
  EXPECT_EQ(rows[1].algorithm, "one-shot");
}

TEST(Compare, StoredSimulatedRunAgainstAnImportedLog) {
  const fs::path dir = fs::temp_directory_path() / "scin-calib-compare";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path db = dir / "cmp.scindb";
  {
    // The simulated run changes one cost on top of its preset: the comparison must use it.
    std::ofstream(dir / "spec.json") << R"({"name": "cmp", "base": {"preset": "hgx-h200-8",
      "set": {"switch.nvls.sync_overhead_ns": 20000}, "collective": {"dtype": "fp32"}},
      "axes": [{"path": "collective.algorithm", "values": ["ring", "nvls"]},
               {"path": "collective.bytes", "values": ["1K", "1M"]}]})";
  }
  auto r = run_cli("sweep '" + (dir / "spec.json").string() + "' --db '" + db.string() + "' --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path log = fs::path(SCIN_CALIB_FIXTURES) / "allreduce-g8-single-process.log";
  r = run_cli("import '" + log.string() + "' --db '" + db.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;

  Store s = Store::open(db, Access::ReadOnly);
  const auto cmp = compare_runs(s, 1, 2);
  const MeasuredFile m = load_measured(log);
  ASSERT_EQ(cmp.size(), m.rows.size());
  Config cfg = load_preset("hgx-h200-8");
  set_param(cfg, "switch.nvls.sync_overhead_ns", 20000.0);
  const ValidationReport direct = validate_rows(cfg, m.rows);
  for (std::size_t i = 0; i < cmp.size(); ++i) {
    EXPECT_EQ(cmp[i].bytes, m.rows[i].bytes);
    EXPECT_EQ(cmp[i].algorithm, "nccl-auto");
    EXPECT_DOUBLE_EQ(cmp[i].measured_us, m.rows[i].measured_us);
    ASSERT_TRUE(cmp[i].modelled) << cmp[i].skipped;
    EXPECT_DOUBLE_EQ(cmp[i].model_us, direct.rows[i].model_us) << cmp[i].bytes;
    EXPECT_DOUBLE_EQ(cmp[i].error, direct.rows[i].error);
  }
  // The measured points read back as the rows that were imported (gpus per process included).
  const auto back = measured_rows(s.points(2));
  ASSERT_EQ(back.size(), m.rows.size());
  EXPECT_EQ(back[0].gpus_per_process, 8);
  EXPECT_DOUBLE_EQ(back[0].in_place_us, m.rows[0].in_place_us);
  // Wrong kinds are errors naming the run.
  EXPECT_THROW(compare_runs(s, 2, 2), Error);
  try {
    compare_runs(s, 1, 1);
    ADD_FAILURE() << "a simulated run is not a measured run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run 1: a collective run, not a measured run"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}



// The measured runs shown next to a simulated run: those whose rows of its GPU count name its
// accelerator as a word (a B200 run is not compared with GB200 rows), with what `scin
// validate --preset P` reports on them.
TEST(Compare, MeasuredRunsMatchTheSimulatedRunsAcceleratorAsAWord) {
  const fs::path dir = fs::temp_directory_path() / "scin-calib-match";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path db = dir / "m.scindb";
  std::ofstream(dir / "spec.json") << R"({"name": "b200", "base": {"preset": "hgx-b200-8"},
      "axes": [{"path": "collective.algorithm", "values": ["ring"]}, {"path": "collective.bytes", "values": ["8", "1K"]}]})";
  auto r = run_cli("sweep '" + (dir / "spec.json").string() + "' --db '" + db.string() + "' --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path hgx = temp_file("scin-match-hgx.csv", "system,gpus,algorithm,bytes,measured_us\n"
                                                      "HGX B200,8,ring,8,23.5\nHGX B200,4,ring,8,20\n");
  const fs::path gb = temp_file("scin-match-gb.csv", "system,gpus,algorithm,bytes,measured_us\nGB200 NVL72,8,ring,8,20\n");
  r = run_cli("import '" + hgx.string() + "' '" + gb.string() + "' --db '" + db.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  Store s = Store::open(db, Access::ReadOnly);
  const MeasuredRunMatches m = match_measured_runs(s, 1);
  EXPECT_EQ(m.preset, "hgx-b200-8");
  ASSERT_EQ(m.runs.size(), 1u);  // run 3 (GB200) names no B200
  EXPECT_EQ(m.runs[0].run_id, 2);
  EXPECT_EQ(m.runs[0].systems, std::vector<std::string>{"HGX B200"});
  ASSERT_EQ(m.runs[0].report.rows.size(), 1u);  // the 8-GPU row only
  const ValidationReport direct = validate_rows(load_preset("hgx-b200-8"), {parse_measured_csv(read(hgx), "x").at(0)});
  EXPECT_DOUBLE_EQ(m.runs[0].report.rows[0].model_us, direct.rows[0].model_us);
  EXPECT_THROW(match_measured_runs(s, 2), Error);  // a measured run is no timing run
  fs::remove(hgx);
  fs::remove(gb);
  fs::remove_all(dir);
}

// A run whose sweep varies the preset has no one fabric: its base configuration (here
// the registry defaults) is no point it ran. A measured run's rows are compared with each
// preset their systems name, base.set applied; a preset none names matches nothing.
TEST(Compare, ARunVaryingThePresetComparesMeasuredRowsWithThePresetTheyName) {
  const fs::path dir = fs::temp_directory_path() / "scin-calib-match-presets";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path db = dir / "m.scindb";
  std::ofstream(dir / "spec.json") << R"({"name": "presets", "base": {"set": {"ring.ll.base_ns": 9000}},
      "axes": [{"path": "preset", "values": ["hgx-b200-8", "hgx-h200-8", "hgx-b200-8"]},
               {"path": "collective.algorithm", "values": ["ring"]}, {"path": "collective.bytes", "values": ["8", "1K"]}]})";
  auto r = run_cli("sweep '" + (dir / "spec.json").string() + "' --db '" + db.string() + "' --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  const char* h200_row = "system,gpus,algorithm,bytes,measured_us\nHGX H200,8,ring,8,20\n";
  const char* b200_row = "system,gpus,algorithm,bytes,measured_us\nHGX B200,8,ring,1024,24\n";
  const fs::path mixed = temp_file("scin-match-mixed.csv", "system,gpus,algorithm,bytes,measured_us\n"
                                                         "HGX H200,8,ring,8,20\nHGX B200,8,ring,1024,24\n");
  const fs::path a100 = temp_file("scin-match-a100.csv", "system,gpus,algorithm,bytes,measured_us\nHGX A100,8,ring,8,20\n");
  r = run_cli("import '" + mixed.string() + "' '" + a100.string() + "' --db '" + db.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  Store s = Store::open(db, Access::ReadOnly);
  const MeasuredRunMatches m = match_measured_runs(s, 1);
  EXPECT_EQ(m.preset, "");
  EXPECT_EQ(m.presets, (std::vector<std::string>{"hgx-b200-8", "hgx-h200-8"}));
  ASSERT_EQ(m.runs.size(), 2u);  // run 2 at each preset; run 3 (A100) names neither
  auto model = [](const char* preset, const char* csv) {
    Config c = load_preset(preset);
    set_param(c, "ring.ll.base_ns", 9000.0);
    return validate_rows(c, {parse_measured_csv(csv, "x").at(0)}).rows.at(0).model_us;
  };
  EXPECT_EQ(m.runs[0].run_id, 2);
  EXPECT_EQ(m.runs[0].preset, "hgx-b200-8");
  EXPECT_EQ(m.runs[0].systems, std::vector<std::string>{"HGX B200"});
  ASSERT_EQ(m.runs[0].report.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(m.runs[0].report.rows[0].model_us, model("hgx-b200-8", b200_row));
  EXPECT_EQ(m.runs[1].run_id, 2);
  EXPECT_EQ(m.runs[1].preset, "hgx-h200-8");
  EXPECT_EQ(m.runs[1].config.fabric.gpus, 8);
  EXPECT_EQ(m.runs[1].systems, std::vector<std::string>{"HGX H200"});
  ASSERT_EQ(m.runs[1].report.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(m.runs[1].report.rows[0].model_us, model("hgx-h200-8", h200_row));
  // (The base configuration models the H200 row otherwise: it would have been a wrong model.)
  Config base;  // (the registry defaults)
  set_param(base, "ring.ll.base_ns", 9000.0);
  EXPECT_NE(validate_rows(base, {parse_measured_csv(h200_row, "x").at(0)}).rows.at(0).model_us,
            m.runs[1].report.rows[0].model_us);
  EXPECT_EQ(run_presets(s.get_run(1)), m.presets);
  EXPECT_THROW(run_preset_config(s.get_run(1), "hgx-h100-8"), Error);  // not a preset it ran
  for (const auto& f : {mixed, a100}) fs::remove(f);
  fs::remove_all(dir);
}

TEST(Holdout, LeaveOneSystemOutNeverSeesTheHeldOutRows) {
  const Config truth = load_preset("hgx-h100-8");
  Config start = truth;
  set_param(start, "ring.ll.base_ns", 8000.0);
  set_param(start, "switch.nvls.efficiency", 0.6);
  std::vector<MeasuredRow> rows;
  for (auto& r : generated(truth, "ring A", "ring", {8, 1024, 32768})) rows.push_back(r);
  for (auto& r : generated(truth, "ring B", "ring", {64, 4096, 262144})) rows.push_back(r);
  for (auto& r : generated(truth, "nvls C", "nvls", {16ull << 20, 256ull << 20, 1ull << 30})) rows.push_back(r);
  FitOptions o;
  o.params = {"ring.ll.base_ns", "switch.nvls.efficiency"};
  o.auto_offsets = false;
  const HoldoutReport rep = leave_one_system_out(start, rows, o);
  ASSERT_EQ(rep.folds.size(), 3u);
  // Ring A held out: ring B still identifies the LL base, so A is predicted exactly.
  const HoldoutFold& a = rep.folds[0];
  EXPECT_EQ(a.held_out, "ring A");
  EXPECT_EQ(a.train_rows, 6);
  EXPECT_GT(a.before.overall.mape_pct, 5.0);
  EXPECT_LT(a.after.overall.mape_pct, 0.5);
  // NVLS C held out: nothing else depends on the NVLS efficiency, so it stays at
  // its start value and C is predicted exactly as badly as before (no leakage).
  const HoldoutFold& c = rep.folds[2];
  EXPECT_EQ(c.held_out, "nvls C");
  ASSERT_EQ(c.params.size(), 2u);
  EXPECT_FALSE(c.params[1].fitted);
  EXPECT_DOUBLE_EQ(c.after.overall.mape_pct, c.before.overall.mape_pct);
  EXPECT_GT(c.after.overall.mape_pct, 5.0);
  // Pooled: every row held out exactly once.
  EXPECT_EQ(rep.after.overall.rows, 9);
  EXPECT_EQ(rep.before.overall.rows, 9);
  EXPECT_THROW(leave_one_system_out(start, generated(truth, "one", "ring", {8, 64}), o), Error);
}

TEST(Holdout, UncalibratedConfigRestoresTheValuesBeforeTheFit) {
  const Config shipped = load_preset("hgx-h200-8");
  nlohmann::json cal = {{"parameters", {{{"path", "ring.ll.base_ns"}, {"before", 4100.0}, {"value", 6965.0}},
                                        {{"path", "ramp.nvls.half_bytes"}, {"before", 0.0}}}}};
  const Config c = uncalibrated_config(shipped, cal);
  EXPECT_DOUBLE_EQ(get_param_number(c, "ring.ll.base_ns"), 4100.0);
  EXPECT_DOUBLE_EQ(get_param_number(c, "ramp.nvls.half_bytes"), 0.0);
  EXPECT_DOUBLE_EQ(get_param_number(c, "switch.nvls.efficiency"), get_param_number(shipped, "switch.nvls.efficiency"));
  EXPECT_DOUBLE_EQ(get_param_number(uncalibrated_config(shipped, nullptr), "ring.ll.base_ns"),
                   get_param_number(shipped, "ring.ll.base_ns"));
  cal["parameters"][0]["path"] = "ring.nope";
  try {
    uncalibrated_config(shipped, cal);
    ADD_FAILURE() << "unknown parameter accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.parameters[0].path: unknown parameter 'ring.nope'"),
              std::string::npos) << e.what();
  }
}


TEST(CalibCli, ValidateHoldoutSystemPrintsEveryFoldAndThePooledRegimes) {
  const fs::path csv = fs::temp_directory_path() / "scin-calib-holdout.csv";
  {
    std::ofstream f(csv);
    f << "system,gpus,algorithm,bytes,measured_us\n"
         "lab A H100,8,ring,8,16.0\nlab A H100,8,ring,4096,17.5\nlab A H100,8,ring,65536,21.0\n"
         "lab B H100,8,ring,64,16.2\nlab B H100,8,ring,32768,19.0\n";
  }
  auto r = run_cli("validate '" + csv.string() + "' --preset hgx-h100-8 --holdout system --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_NE(j["protocol"].get<std::string>().find("not independent validation"), std::string::npos);
  ASSERT_EQ(j["folds"].size(), 2u);
  EXPECT_EQ(j["folds"][0]["held_out"], "lab A H100");
  EXPECT_EQ(j["folds"][0]["train_rows"], 2);
  EXPECT_EQ(j["folds"][0]["after"]["rows"].size(), 3u);
  EXPECT_EQ(j["after"]["overall"]["rows"], 5);
  EXPECT_EQ(j["before"]["by_regime"]["small"]["rows"], 5);   // 64 KiB is still small
  auto t = run_cli("validate '" + csv.string() + "' --preset hgx-h100-8 --holdout system");
  ASSERT_EQ(t.status, 0) << t.output;
  EXPECT_NE(t.output.find("cross-validation WITHIN these rows, not independent validation"), std::string::npos);
  EXPECT_NE(t.output.find("held out: lab B H100 (2 rows; fitted on 3 rows)"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("all held-out rows, pooled"), std::string::npos);
  auto bad = run_cli("validate '" + csv.string() + "' --preset hgx-h100-8 --holdout file");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("--holdout: 'file' is not supported (use: system)"), std::string::npos) << bad.output;
  auto one = run_cli("validate '" + csv.string() + "' --preset hgx-h100-8 --holdout system --system 'lab A'");
  EXPECT_EQ(one.status, 2);
  EXPECT_NE(one.output.find("leaving one out needs at least two"), std::string::npos) << one.output;
  fs::remove(csv);
}

TEST(CalibCli, ValidateReportsWhereTheFittedH200NvlsReachesHalfBandwidth) {
  // Rows of resources/measured/calibration-allreduce.csv: hgx-h200-8 was fitted on them.
  auto r = run_cli(std::string("validate '") + SCIN_CALIB_FIXTURES +
                   "/../../../resources/measured/calibration-allreduce.csv' --preset hgx-h200-8 --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  bool found = false;
  for (const auto& h : j["half_peak"])
    if (h["algorithm"] == "nvls") {
      found = true;
      EXPECT_EQ(h["largest_bytes"], 17179869184ull);
      EXPECT_GT(h["harness_offset_us"].get<double>(), 15.0);
      const double ratio = h["model_bytes"].get<double>() / h["measured_bytes"].get<double>();
      EXPECT_GT(ratio, 1 / 1.3);
      EXPECT_LT(ratio, 1.3);
    }
  EXPECT_TRUE(found) << r.output;
}

}  // namespace
