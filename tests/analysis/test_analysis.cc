// The analysis table and plots over real sweeps: the shipped example specs run
// into a scratch database, read back, and every plotted point checked against
// the stored point it came from.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <sqlite3.h>

#include "analysis/combine.h"
#include "analysis/plot.h"
#include "analysis/table.h"
#include "base/csv.h"
#include "base/error.h"
#include "base/text.h"
#include "fabric/preset.h"
#include "store/store_test_util.h"
#include "sweep/sweep.h"

namespace scin::analysis {
namespace {

struct Stored {
  RunInfo run;
  std::vector<PointRecord> points;
};

Stored run_example(const std::filesystem::path& db, const std::string& name) {
  SweepSpec spec = load_sweep_spec(resource_dir() / "sweeps" / (name + ".json"));
  Store store = Store::open(db, Access::Create);
  SweepOptions opts;
  opts.threads = 2;
  SweepSummary sum = run_sweep(store, spec, opts, {});
  EXPECT_EQ(sum.status, RunStatus::Done);
  Stored s{store.get_run(sum.run_id), store.points(sum.run_id)};
  return s;
}

PlotQuery query_of(std::string x, std::string y, std::string facet = {}) {
  PlotQuery q;
  q.x = std::move(x);
  q.y = std::move(y);
  q.facet = std::move(facet);
  return q;
}

const PointRecord& stored(const Stored& s, const AnalysisTable& t, std::size_t row) {
  return s.points.at(t.rows.at(row).point_index);
}

class AnalysisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    waves_ = new Stored(run_example(*dir_ / "a.scindb", "isa-waves"));
    quant_ = new Stored(run_example(*dir_ / "a.scindb", "quant-blocks"));
    infer_ = new Stored(run_example(*dir_ / "a.scindb", "inference-tp"));
  }
  static void TearDownTestSuite() {
    delete waves_;
    delete quant_;
    delete infer_;
    delete dir_;
  }
  static test::TempDir* dir_;
  static Stored *waves_, *quant_, *infer_;
};
test::TempDir* AnalysisTest::dir_ = nullptr;
Stored* AnalysisTest::waves_ = nullptr;
Stored* AnalysisTest::quant_ = nullptr;
Stored* AnalysisTest::infer_ = nullptr;

TEST_F(AnalysisTest, TimingTableHasEverySweptAxisAndUnits) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  ASSERT_EQ(t.rows.size(), waves_->points.size());  // 2 x 6 x 7, all ok
  EXPECT_EQ(t.rows.size(), 2u * 6u * 7u);
  std::vector<std::string> keys;
  for (const Column& c : t.axes) keys.push_back(c.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"collective.algorithm", "switch.isa.regulation", "switch.isa.waves",
                                            "collective.bytes"}));
  EXPECT_FALSE(t.find("switch.isa.regulation")->numeric);
  EXPECT_TRUE(t.find("switch.isa.waves")->numeric);
  EXPECT_TRUE(t.find("collective.bytes")->bytes);
  EXPECT_EQ(t.find("time_us")->unit, "µs");
  EXPECT_EQ(t.find("busbw_GBps")->unit, "GB/s");
  EXPECT_EQ(t.find("max_link_bytes")->unit, "bytes");
  ASSERT_NE(t.find("speedup"), nullptr);
  // Distinct values in numeric order; sizes named in binary units.
  auto sizes = t.distinct(t.axis_index("collective.bytes"));
  ASSERT_EQ(sizes.size(), 7u);
  EXPECT_EQ(sizes.front().text, "64 KiB");
  EXPECT_EQ(sizes.front().number, 65536);
  EXPECT_EQ(sizes.back().text, "256 MiB");
  // Breakdown terms are metrics in ns and sum to the time.
  for (std::size_t r = 0; r < t.rows.size(); r += 17) {
    double sum = 0;
    for (std::size_t m = 0; m < t.metrics.size(); ++m)
      if (t.metrics[m].unit == "ns") sum += t.rows[r].metrics[m];
    EXPECT_NEAR(sum, stored(*waves_, t, r).time_us * 1e3, 1e-6 * sum);
  }
}

// A panel shown by its value alone (the key moved to the x title) keeps the
// axis's unit: "100 ns", not "100". Waves have no unit, so give the column one.
TEST_F(AnalysisTest, FacetTitlesOfANumericAxisCarryItsUnit) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  PlotQuery q = query_of("collective.bytes", "time_us", "switch.isa.waves");
  PlotData plain = make_plot(t, q);
  ASSERT_FALSE(plain.facets.empty());
  EXPECT_EQ(plain.facets[0].shown, plain.facets[0].value);
  EXPECT_EQ(plain.facets[0].title, "waves = " + plain.facets[0].value);
  t.axes[static_cast<std::size_t>(t.axis_index("switch.isa.waves"))].unit = "ns";
  PlotData p = make_plot(t, q);
  ASSERT_EQ(p.facets.size(), plain.facets.size());
  for (const Facet& f : p.facets) {
    EXPECT_EQ(f.shown, f.value + " ns");
    EXPECT_EQ(f.title, "waves = " + f.value + " ns");
  }
  // Byte sizes already carry theirs ("64 KiB"): nothing is added.
  q.facet = "collective.bytes";
  q.x = "switch.isa.waves";
  PlotData b = make_plot(t, q);
  ASSERT_FALSE(b.facets.empty());
  EXPECT_EQ(b.facets[0].shown, "64 KiB");
  EXPECT_EQ(b.facets[0].title, "size = 64 KiB");
}

// What points say of themselves (extra.note) reaches the table and the plot's
// notes, counted per plotted point: NCCL does not run NVLS on 2 GPUs, so the
// nvls points at 2 GPUs carry a note, those at 4 do not, and ring none.
TEST(AnalysisNotes, NvlsOnTwoGpusIsNotedOncePerPlot) {
  test::TempDir dir;
  SweepSpec spec = sweep_spec_from_json(nlohmann::json::parse(R"({
    "name": "nvls-2", "kind": "collective", "base": {"preset": "hgx-h200-8"},
    "axes": [{"path": "fabric.gpus", "values": [2, 4]},
             {"path": "collective.algorithm", "values": ["ring", "nvls"]},
             {"path": "collective.bytes", "values": ["1K", "64K", "1M"]}]})"));
  Store store = Store::open(dir / "n.scindb", Access::Create);
  SweepOptions opts;
  opts.threads = 1;
  const SweepSummary sum = run_sweep(store, spec, opts, {});
  ASSERT_EQ(sum.status, RunStatus::Done);
  const auto pts = store.points(sum.run_id);
  AnalysisTable t = build_table(store.get_run(sum.run_id), pts);
  ASSERT_EQ(t.rows.size(), 12u);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_NE(t.notes[0].find("NVLS"), std::string::npos) << t.notes[0];
  const int gi = t.axis_index("fabric.gpus");
  ASSERT_GE(gi, 0);
  std::size_t noted = 0;
  for (const Row& r : t.rows) {
    const bool want = r.axes[0].text == "nvls" && r.axes[static_cast<std::size_t>(gi)].number == 2;
    EXPECT_EQ(r.note >= 0, want) << r.axes[0].text << " at " << r.axes[static_cast<std::size_t>(gi)].text << " GPUs";
    noted += want;
  }
  EXPECT_EQ(noted, 3u);
  PlotQuery q = query_of("collective.bytes", "time_us", "fabric.gpus");
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  std::vector<std::string> mine;
  for (const auto& n : p.notes)
    if (n.rfind("nvls: ", 0) == 0) mine.push_back(n);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0], "nvls: " + t.notes[0] + " (3 points)");
  // Filtered to 4 GPUs, no plotted point carries it.
  q.facet.clear();
  q.filters["fabric.gpus"] = {"4"};
  PlotData p4 = make_plot(t, q);
  ASSERT_TRUE(p4.empty_reason.empty()) << p4.empty_reason;
  for (const auto& n : p4.notes) EXPECT_EQ(n.find(t.notes[0]), std::string::npos) << n;
}

TEST_F(AnalysisTest, WavesOnXFacetByRegulationMatchesStoredPoints) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  PlotQuery q = query_of("switch.isa.waves", "time_us", "switch.isa.regulation");
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 2u);
  EXPECT_EQ(p.facets[0].title, "regulation = none");
  EXPECT_EQ(p.facets[1].title, "regulation = paced");
  EXPECT_EQ(p.facets[1].shown, "paced");  // a text axis has no unit to add
  EXPECT_EQ(p.point_count(), t.rows.size());
  // One series per size; algorithm is the same everywhere so it is not named.
  ASSERT_EQ(p.facets[0].series.size(), 7u);
  EXPECT_EQ(p.facets[0].series[0].label, "size=64 KiB");
  EXPECT_EQ(p.facets[0].series[6].label, "size=256 MiB");
  EXPECT_EQ(p.color_field, "collective.bytes");
  std::set<int> colors;
  for (const Series& s : p.facets[0].series) colors.insert(s.color);
  EXPECT_EQ(colors.size(), 7u);
  for (const Facet& f : p.facets)
    for (const Series& s : f.series) {
      ASSERT_EQ(s.points.size(), 6u);
      for (std::size_t k = 0; k < s.points.size(); ++k) {
        const PointRecord& pr = stored(*waves_, t, s.points[k].row);
        EXPECT_EQ(s.points[k].y, pr.time_us);
        EXPECT_EQ(s.points[k].x, pr.axes.at("switch.isa.waves").get<double>());
        EXPECT_EQ(pr.axes.at("switch.isa.regulation").get<std::string>(), f.value);
        if (k > 0) { EXPECT_LT(s.points[k - 1].x, s.points[k].x); }
      }
    }
}

// Several runs in one table: the run is an axis, a column one run lacks reads
// "–", every value is the stored point of its own run, and a plot splits series
// by run (the legend names it).
TEST_F(AnalysisTest, CombinedRunsKeepEveryRowAndNameTheRun) {
  const nlohmann::json j = {
      {"name", "plain"},
      {"kind", "collective"},
      {"base", {{"preset", "hgx-h200-8"}, {"collective", {{"dtype", "bf16"}}}}},
      {"axes",
       {{{"path", "collective.algorithm"}, {"values", {"ring", "scin"}}},
        {{"path", "collective.bytes"}, {"range", {{"min", "1K"}, {"max", "1M"}, {"factor", 4}}}}}}};
  Store store = Store::open(*dir_ / "a.scindb", Access::ReadWrite);
  SweepOptions opts;
  opts.threads = 1;
  const SweepSummary sum = run_sweep(store, sweep_spec_from_json(j), opts, {});
  ASSERT_EQ(sum.status, RunStatus::Done);
  const Stored plain{store.get_run(sum.run_id), store.points(sum.run_id)};
  const AnalysisTable a = build_table(waves_->run, waves_->points), b = build_table(plain.run, plain.points);
  const AnalysisTable t = combine_tables({a, b});
  ASSERT_EQ(t.rows.size(), a.rows.size() + b.rows.size());
  ASSERT_EQ(t.axes.at(0).key, "collective.algorithm");
  ASSERT_EQ(t.axes.at(1).key, kRunAxis);
  const int run = t.axis_index(kRunAxis), waves = t.axis_index("switch.isa.waves"), time = t.metric_index("time_us");
  ASSERT_GE(waves, 0);
  ASSERT_GE(time, 0);
  const std::string name_a = "#" + std::to_string(a.run.id) + " " + a.run.name;
  const std::string name_b = "#" + std::to_string(b.run.id) + " " + b.run.name;
  EXPECT_EQ(t.distinct(run).size(), 2u);
  EXPECT_FALSE(t.axes[static_cast<std::size_t>(waves)].numeric);  // "–" in the plain run's rows
  for (const Row& r : t.rows) {
    const bool from_a = r.axes[static_cast<std::size_t>(run)].text == name_a;
    ASSERT_TRUE(from_a || r.axes[static_cast<std::size_t>(run)].text == name_b);
    const Stored& s = from_a ? *waves_ : plain;
    EXPECT_EQ(r.metrics[static_cast<std::size_t>(time)], s.points.at(r.point_index).time_us);
    if (!from_a) {
      EXPECT_EQ(r.axes[static_cast<std::size_t>(waves)].text, "–");
    }
  }
  EXPECT_NE(t.run.name.find(name_b), std::string::npos);
  // Latency vs size, split by algorithm and run (the waves run held at one waves / regulation value).
  PlotQuery q;
  q.series = {"collective.algorithm", kRunAxis};
  q.filters["collective.algorithm"] = {"scin"};
  const PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.legend().size(), 2u);
  std::set<std::string> labels;
  for (const Series* s : p.legend()) labels.insert(s->label);
  EXPECT_TRUE(labels.count("run=" + name_b)) << *labels.begin();
  // Panels by waves: the plain run has no waves ("–"), so each panel holds one
  // run, which rides with the panel; a title leaves "–" out ("#2 plain", not
  // "– · #2 plain"), numeric values keep their units although the combined
  // column is not numeric, and no curve name says "=–".
  PlotQuery byWaves;
  byWaves.facet = "switch.isa.waves";
  byWaves.filters["switch.isa.regulation"] = {"none", "–"};
  const PlotData pw = make_plot(t, byWaves);
  ASSERT_TRUE(pw.empty_reason.empty()) << pw.empty_reason;
  EXPECT_EQ(pw.facet_riders, std::vector<std::string>{kRunAxis});
  bool plainPanel = false;
  for (const Facet& f : pw.facets) {
    EXPECT_EQ(f.title.find("–"), std::string::npos) << f.title;
    if (f.value == "–") {
      plainPanel = true;
      EXPECT_EQ(f.shown, name_b);
    } else {
      EXPECT_EQ(f.shown, f.value + " · " + name_a) << f.shown;
    }
    for (const Series& c : f.series) EXPECT_EQ(c.label.find("=–"), std::string::npos) << c.label;
  }
  EXPECT_TRUE(plainPanel);
  // Runs of different kinds do not combine, and the message says so in English.
  try {
    combine_tables({a, build_table(quant_->run, quant_->points)});
    ADD_FAILURE() << "a timing run and a quant run combined";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("is a collective run and #"), std::string::npos) << m;
    EXPECT_NE(m.find(" a quant run; only runs of one kind plot together"), std::string::npos) << m;
  }
  EXPECT_EQ(with_article("inference"), "an inference");
  EXPECT_EQ(with_article("Inference"), "an Inference");
  EXPECT_EQ(with_article("quant"), "a quant");
  EXPECT_EQ(with_article(""), "a ");
}

TEST_F(AnalysisTest, LegendNamesOnlyDifferingValues) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  PlotQuery q;  // x = size, no facet: series = waves x regulation
  q.y = "busbw_GBps";
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 1u);
  ASSERT_EQ(p.facets[0].series.size(), 12u);
  std::set<std::string> labels;
  for (const Series& s : p.facets[0].series) labels.insert(s.label);
  EXPECT_EQ(labels.size(), 12u);
  EXPECT_TRUE(labels.count("regulation=paced · waves=4")) << *labels.begin();
  EXPECT_EQ(p.color_field, "switch.isa.regulation");
  EXPECT_EQ(p.style_field, "switch.isa.waves");
  // Colour x style pairs are unique, so every curve is distinguishable.
  std::set<std::pair<int, int>> enc;
  for (const Series& s : p.facets[0].series) enc.insert({s.color, s.style});
  EXPECT_EQ(enc.size(), 12u);
  // Choosing only waves as series holds regulation at its first value.
  q.series = {"switch.isa.waves"};
  PlotData held = make_plot(t, q);
  ASSERT_TRUE(held.empty_reason.empty());
  EXPECT_EQ(held.facets[0].series.size(), 6u);
  ASSERT_FALSE(held.notes.empty());
  EXPECT_NE(held.notes[0].find("switch.isa.regulation held at none"), std::string::npos);
  // A filter keeps only the values asked for.
  q.series.clear();
  q.filters["switch.isa.waves"] = {"1", "32"};
  PlotData f = make_plot(t, q);
  EXPECT_EQ(f.facets[0].series.size(), 4u);
  q.filters["switch.isa.waves"] = {"3"};
  EXPECT_FALSE(make_plot(t, q).empty_reason.empty());
}

TEST_F(AnalysisTest, SpeedupExplainsWhenItCannotBeComputed) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  PlotQuery q;
  q.y = "speedup";
  PlotData p = make_plot(t, q);
  EXPECT_NE(p.empty_reason.find("only scin"), std::string::npos) << p.empty_reason;
  q.y = "no_such_metric";
  EXPECT_NE(make_plot(t, q).empty_reason.find("time_us"), std::string::npos);
  q.y = "time_us";
  q.x = "links.nope";
  EXPECT_NE(make_plot(t, q).empty_reason.find("switch.isa.waves"), std::string::npos);
}

TEST_F(AnalysisTest, QuantRunPlotsErrorPerAlgorithm) {
  AnalysisTable t = build_table(quant_->run, quant_->points);
  EXPECT_EQ(t.kind, PointKind::Quant);
  ASSERT_NE(t.find("rel_l2"), nullptr);
  EXPECT_EQ(t.find("sqnr_dB")->unit, "dB");
  EXPECT_EQ(t.find("time_us"), nullptr);
  PlotQuery q = default_query(t);
  EXPECT_EQ(q.x, "quant.block_elems");
  q.y = "sqnr_dB";
  q.facet = "input.dist";
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 2u);
  std::size_t n = 0;
  for (const Facet& f : p.facets)
    for (const Series& s : f.series)
      for (const SeriesPoint& pt : s.points) {
        const PointRecord& pr = stored(*quant_, t, pt.row);
        EXPECT_EQ(pt.y, pr.sqnr_dB);
        EXPECT_EQ(pt.x, pr.axes.at("quant.block_elems").get<double>());
        EXPECT_EQ(s.algorithm, pr.algorithm);
        EXPECT_EQ(s.label, pr.algorithm);
        ++n;
      }
  EXPECT_EQ(n, t.rows.size());
  // A text axis on x: categories in spec order.
  q.x = "collective.algorithm";
  q.facet.clear();
  PlotData c = make_plot(t, q);
  ASSERT_TRUE(c.empty_reason.empty()) << c.empty_reason;
  EXPECT_TRUE(c.x_categorical);
  EXPECT_EQ(c.x_categories.front(), "ring");
}

// quant-blocks: scin-inq and two-shot-q8 both quantise twice and have the same
// error at every block size, so the later curve would hide the earlier one.
TEST_F(AnalysisTest, CurvesWithTheSameValuesAreMarkedAndNoted) {
  AnalysisTable t = build_table(quant_->run, quant_->points);
  PlotQuery q = default_query(t);
  for (const std::string y : {"sqnr_dB", "rel_l2"}) {
    q.y = y;
    PlotData p = make_plot(t, q);
    ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
    std::size_t marked = 0;
    for (const Facet& f : p.facets)
      for (std::size_t j = 0; j < f.series.size(); ++j) {
        const Series& s = f.series[j];
        // same_as names the first earlier series whose every point is equal, and only that.
        std::string first;
        for (std::size_t i = 0; i < j && first.empty(); ++i) {
          const Series& e = f.series[i];
          bool same = e.points.size() == s.points.size();
          for (std::size_t k = 0; same && k < s.points.size(); ++k)
            same = e.points[k].x == s.points[k].x &&
                   std::fabs(e.points[k].y - s.points[k].y) <= 1e-9 * std::fabs(s.points[k].y);
          if (same) first = e.key;
        }
        EXPECT_EQ(s.same_as, first) << s.key;
        if (!s.same_as.empty()) ++marked;
      }
    // One pair per input distribution (series split by algorithm and distribution):
    // scin-inq and two-shot-q8 of the same inputs, never curves of different inputs.
    std::set<std::pair<std::string, std::string>> pairs;
    for (const Facet& f : p.facets)
      for (const Series& s : f.series) {
        if (s.same_as.empty()) continue;
        const Series* other = nullptr;
        for (const Series& e : f.series)
          if (e.key == s.same_as) other = &e;
        ASSERT_NE(other, nullptr);
        EXPECT_EQ((std::set<std::string>{s.algorithm, other->algorithm}),
                  (std::set<std::string>{"scin-inq", "two-shot-q8"}));
        EXPECT_EQ(s.fields.at(1), other->fields.at(1));  // the same input.dist
        pairs.insert({s.key, s.same_as});
      }
    EXPECT_EQ(marked, 2u) << y;
    EXPECT_EQ(pairs.size(), 2u) << y;
    std::size_t noted = 0;
    for (const std::string& n : p.notes)
      if (n.find("has the same values as") != std::string::npos) {
        ++noted;
        EXPECT_NE(n.find("scin-inq"), std::string::npos) << n;
        EXPECT_NE(n.find("two-shot-q8"), std::string::npos) << n;
        EXPECT_EQ(n.find("panels"), std::string::npos) << n;  // in every panel: no panel count
      }
    EXPECT_EQ(noted, pairs.size()) << y;
  }
}

// isa-waves: paced regulation gives the same times as none at every wave
// count here, six pairs: counted in one note with an example, not six notes.
TEST_F(AnalysisTest, ManyCurvesWithTheSameValuesAreCountedInOneNote) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  PlotData p = make_plot(t, default_query(t));
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  std::set<std::pair<std::string, std::string>> pairs;  // (series, its twin), over every panel
  for (const Facet& f : p.facets)
    for (const Series& s : f.series)
      if (!s.same_as.empty()) pairs.insert({s.key, s.same_as});
  const std::size_t marked = pairs.size();
  ASSERT_GT(marked, kSameValuesPairsNamed);
  std::vector<std::string> same;
  for (const std::string& n : p.notes)
    if (n.find("same values") != std::string::npos) same.push_back(n);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].rfind(std::to_string(marked) + " curves have the same values as another curve, e.g. ", 0), 0u) << same[0];
}

TEST(AnalysisSameValues, OnePointApartIsNotTheSameAndSomePanelsAreCounted) {
  AnalysisTable t;
  auto column = [](std::string key, std::string short_name, std::string unit, Role role, bool numeric) {
    Column c;
    c.key = c.label = std::move(key);
    c.short_name = std::move(short_name);
    c.unit = std::move(unit);
    c.role = role;
    c.numeric = numeric;
    return c;
  };
  t.axes = {column("collective.algorithm", "algorithm", "", Role::Axis, false),
            column("collective.bytes", "size", "bytes", Role::Axis, true),
            column("links.latency_ns", "latency", "ns", Role::Axis, true)};
  t.metrics = {column("time_us", "time", "us", Role::Metric, true)};
  // a and b agree in panel 100 ns; in 200 ns they differ at one point by 1e-6 relative.
  auto row = [&](const std::string& algo, double bytes, double lat, double us) {
    Row r;
    r.point_index = t.rows.size();
    r.axes = {AxisValue{algo}, AxisValue{std::to_string(static_cast<int>(bytes)), bytes},
              AxisValue{std::to_string(static_cast<int>(lat)), lat}};
    r.metrics = {us};
    t.rows.push_back(r);
  };
  for (double lat : {100.0, 200.0})
    for (double b : {1024.0, 2048.0, 4096.0}) {
      row("a", b, lat, b / 100);
      row("b", b, lat, lat == 200 && b == 2048 ? b / 100 * (1 + 1e-6) : b / 100);
    }
  t.index_values();
  PlotQuery q;
  q.x = "collective.bytes";
  q.y = "time_us";
  q.facet = "links.latency_ns";
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 2u);
  EXPECT_EQ(p.facets[0].series[1].same_as, "collective.algorithm=a");
  EXPECT_EQ(p.facets[1].series[1].same_as, "");
  EXPECT_EQ(p.facets[0].series[0].same_as, "");
  EXPECT_NE(std::find(p.notes.begin(), p.notes.end(), "b has the same values as a in 1 of 2 panels (drawn dashed over it)"),
            p.notes.end());
}

TEST_F(AnalysisTest, InferenceRunPlotsTtftTpotAndSpeedups) {
  AnalysisTable t = build_table(infer_->run, infer_->points);
  ASSERT_NE(t.find("ttft_us"), nullptr);
  ASSERT_NE(t.find("decode_comm_share"), nullptr);
  EXPECT_EQ(t.axis_index("collective.bytes"), -1);
  PlotQuery q = default_query(t);
  EXPECT_EQ(q.x, "inference.batch");
  EXPECT_EQ(q.baseline, "ring");
  q.y = "tpot_us";
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  EXPECT_EQ(p.facets[0].series.size(), 4u);
  for (const Series& s : p.facets[0].series)
    for (const SeriesPoint& pt : s.points) EXPECT_EQ(pt.y, stored(*infer_, t, pt.row).tpot_us);
  q.y = "ttft_speedup";
  PlotData sp = make_plot(t, q);
  ASSERT_TRUE(sp.empty_reason.empty()) << sp.empty_reason;
  for (const Series& s : sp.facets[0].series)
    for (const SeriesPoint& pt : s.points) {
      const PointRecord& pr = stored(*infer_, t, pt.row);
      double base = 0;
      for (const PointRecord& o : infer_->points)
        if (o.algorithm == "ring" && o.axes.at("inference.batch") == pr.axes.at("inference.batch")) base = o.ttft_us;
      EXPECT_DOUBLE_EQ(pt.y, base / pr.ttft_us);
      if (s.algorithm == "ring") { EXPECT_EQ(pt.y, 1.0); }
    }
  q.baseline = "two-shot";
  EXPECT_NE(make_plot(t, q).empty_reason.find("choose one of: ring, nvls, scin, scin-inq"), std::string::npos);
}

TEST_F(AnalysisTest, CsvHasHeaderBlockAndRfc4180Rows) {
  AnalysisTable t = build_table(waves_->run, waves_->points);
  PlotQuery q;
  q.x = "switch.isa.waves";
  q.facet = "switch.isa.regulation";
  PlotData p = make_plot(t, q);
  std::istringstream in(plot_csv(t, p));
  std::string line;
  std::vector<std::string> comments;
  std::vector<std::vector<std::string>> recs;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) comments.push_back(line);
    else recs.push_back(csv_parse_record(line));
  }
  ASSERT_FALSE(comments.empty());
  EXPECT_NE(comments[1].find("isa-waves"), std::string::npos);
  bool tool = false, preset = false;
  for (const auto& c : comments) {
    tool |= c.find("# tool: scin ") == 0;
    preset |= c == "# preset: hgx-h200-8";
  }
  EXPECT_TRUE(tool);
  EXPECT_TRUE(preset);
  ASSERT_EQ(recs.size(), 1 + t.rows.size());
  EXPECT_EQ(recs[0], (std::vector<std::string>{"point_index", "facet", "series", "collective.algorithm",
                                               "collective.bytes", "switch.isa.waves", "time_us"}));
  for (std::size_t i = 1; i < recs.size(); ++i) {
    const PointRecord& pr = waves_->points.at(std::stoull(recs[i][0]));
    EXPECT_EQ(std::stod(recs[i][6]), pr.time_us);
    EXPECT_EQ(recs[i][1], pr.axes.at("switch.isa.regulation").get<std::string>());
  }
}

TEST(AnalysisZip, ZippedAxesRideAlongWithX) {
  test::TempDir dir;
  Stored s = run_example(dir / "z.scindb", "link-scaling");
  AnalysisTable t = build_table(s.run, s.points);
  bool zipped = false;
  for (const auto& a : t.run.axes) zipped |= a == "links.latency_ns: 150, 125, 100 (zipped)";
  EXPECT_TRUE(zipped);
  PlotQuery q = query_of("links.bandwidth_GBps", "busbw_GBps", "fabric.gpus");
  q.filters["collective.bytes"] = {"1 GiB"};
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 3u);
  // Latency moves with bandwidth: one curve per algorithm with all three link generations.
  for (const Facet& f : p.facets) {
    ASSERT_EQ(f.series.size(), 4u) << f.title;
    for (const Series& s2 : f.series) {
      EXPECT_EQ(s2.label, s2.algorithm);
      ASSERT_EQ(s2.points.size(), 3u);
      for (const SeriesPoint& pt : s2.points) EXPECT_EQ(pt.y, s.points.at(t.rows[pt.row].point_index).busbw_GBps);
    }
  }
  EXPECT_NE(std::find(p.notes.begin(), p.notes.end(), "links.latency_ns moves with links.bandwidth_GBps (zipped)"),
            p.notes.end());
}

// Panels by bandwidth, size on x: latency moves with the panel, so it splits no
// curve (4 algorithms x 3 GPU counts per panel, not x 3 latencies across them)
// and each panel's title names it; the CSV keeps it beside the facet.
TEST(AnalysisZip, ZippedAxesRideAlongWithTheFacet) {
  test::TempDir dir;
  Stored s = run_example(dir / "z.scindb", "link-scaling");
  AnalysisTable t = build_table(s.run, s.points);
  PlotQuery q = query_of("collective.bytes", "time_us", "links.bandwidth_GBps");
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 3u);
  EXPECT_EQ(p.facet_riders, std::vector<std::string>{"links.latency_ns"});
  EXPECT_EQ(p.facet_label, "Link bandwidth · Link latency");
  EXPECT_EQ(p.legend().size(), 12u);
  const char* latency[] = {"150", "125", "100"};
  for (std::size_t k = 0; k < 3; ++k) {
    const Facet& f = p.facets[k];
    ASSERT_EQ(f.riders.size(), 1u);
    EXPECT_EQ(f.riders[0], (std::pair<std::string, std::string>{"links.latency_ns", latency[k]}));
    EXPECT_EQ(f.shown, f.value + " GB/s · " + latency[k] + " ns");
    // The unit is in the value, so the name leaves its suffix: "bandwidth = 450 GB/s · latency = 125 ns".
    EXPECT_EQ(f.title, "bandwidth = " + f.value + " GB/s · latency = " + latency[k] + " ns");
    ASSERT_EQ(f.series.size(), 12u) << f.title;
    for (const Series& c : f.series) {
      EXPECT_EQ(c.label.find("latency"), std::string::npos) << c.label;
      for (const SeriesPoint& pt : c.points)
        EXPECT_EQ(t.rows[pt.row].axes[static_cast<std::size_t>(t.axis_index("links.latency_ns"))].text, latency[k]);
    }
  }
  EXPECT_NE(std::find(p.notes.begin(), p.notes.end(),
                      "links.latency_ns moves with links.bandwidth_GBps: named in the panel titles"),
            p.notes.end());
  std::istringstream in(plot_csv(t, p));
  std::string line;
  std::vector<std::vector<std::string>> recs;
  while (std::getline(in, line))
    if (line.rfind("# ", 0) != 0) recs.push_back(csv_parse_record(line));
  ASSERT_EQ(recs.size(), 1 + t.rows.size());
  EXPECT_EQ(recs[0][1], "facet");
  EXPECT_EQ(recs[0][2], "links.latency_ns");
  for (std::size_t i = 1; i < recs.size(); ++i) {
    const PointRecord& pr = s.points.at(std::stoull(recs[i][0]));
    EXPECT_EQ(std::stod(recs[i][2]), pr.axes.at("links.latency_ns").get<double>());
  }
  // An axis that is not zipped with the facet still splits curves.
  PlotData g = make_plot(t, query_of("collective.bytes", "time_us", "fabric.gpus"));
  ASSERT_TRUE(g.empty_reason.empty()) << g.empty_reason;
  EXPECT_TRUE(g.facet_riders.empty());
}

// scin-scale's zip (preset x fabric.gpus x fabric.leaves) with fabric.gpus on x:
// 72 GPUs appear on both presets, so preset splits curves, but leaves is fixed by
// gpus and preset and must ride along (not cut each curve into one-point pieces).
TEST(AnalysisZip, ZipMemberFixedByXAndSeriesRidesAlong) {
  test::TempDir dir;
  nlohmann::json j = {
      {"name", "scale-small"},
      {"kind", "collective"},
      {"axes",
       {{{"zip",
          {{{"path", "preset"}, {"values", {"gb200-nvl72", "gb200-nvl72", "nvl576-style", "nvl576-style"}}},
           {{"path", "fabric.gpus"}, {"values", {36, 72, 72, 144}}},
           {{"path", "fabric.leaves"}, {"values", {1, 1, 2, 4}}}}}},
        {{"path", "collective.algorithm"}, {"values", {"ring", "scin"}}},
        {{"path", "collective.bytes"}, {"values", {"1M"}}}}}};
  SweepSpec spec = sweep_spec_from_json(j);
  Store store = Store::open(dir / "s.scindb", Access::Create);
  SweepOptions opts;
  opts.threads = 2;
  SweepSummary sum = run_sweep(store, spec, opts, {});
  ASSERT_EQ(sum.status, RunStatus::Done);
  AnalysisTable t = build_table(store.get_run(sum.run_id), store.points(sum.run_id));
  PlotQuery q;
  q.x = "fabric.gpus";
  q.y = "busbw_GBps";
  PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  ASSERT_EQ(p.facets.size(), 1u);
  // 2 algorithms x 2 presets, each curve with both of its preset's GPU counts.
  ASSERT_EQ(p.facets[0].series.size(), 4u);
  for (const Series& s2 : p.facets[0].series) {
    EXPECT_EQ(s2.points.size(), 2u) << s2.label;
    EXPECT_EQ(s2.label.find("leaves"), std::string::npos) << s2.label;
    EXPECT_NE(s2.label.find("preset="), std::string::npos) << s2.label;
  }
  EXPECT_NE(std::find(p.notes.begin(), p.notes.end(), "fabric.leaves moves with fabric.gpus (zipped)"), p.notes.end());
}

TEST(AnalysisSpec, UnreadableSpecIsReportedNotThrown) {
  for (nlohmann::json spec : {nlohmann::json("not json"), nlohmann::json::array({1, 2, 3})}) {
    RunInfo run;
    run.id = 7;
    run.name = "odd";
    run.spec = spec;
    PointRecord p;
    p.algorithm = "ring";
    p.bytes = 1024;
    p.time_us = 3;
    AnalysisTable t = build_table(run, {p});
    EXPECT_FALSE(t.run.spec_readable);
    bool said = false;
    for (const auto& [k, v] : t.run.lines()) said |= v.find("spec unreadable") != std::string::npos;
    EXPECT_TRUE(said);
    ASSERT_EQ(t.rows.size(), 1u);
    PlotData pd = make_plot(t, PlotQuery{});
    ASSERT_TRUE(pd.empty_reason.empty()) << pd.empty_reason;
    EXPECT_EQ(pd.facets[0].series[0].points[0].y, 3);
  }
}

TEST(AnalysisSpec, SkippedPointsAreCountedWithTheirReason) {
  RunInfo run;
  PointRecord p;
  p.status = PointStatus::Skipped;
  p.message = "nvls needs a switch";
  AnalysisTable t = build_table(run, {p});
  EXPECT_EQ(t.skipped, 1u);
  PlotData pd = make_plot(t, PlotQuery{});
  EXPECT_NE(pd.empty_reason.find("nvls needs a switch"), std::string::npos);
}


// A measured run (scin import) plots its timings: the system and GPU count it
// mixes are axes, the measurement and busbw are metrics.
TEST(AnalysisMeasured, ImportedRowsPlotPerSystemAgainstSize) {
  RunInfo run;
  run.kind = PointKind::Measured;
  run.spec = {{"kind", "measured"}, {"file", "m.csv"}};
  struct M {
    const char* system;
    int gpus;
    std::uint64_t bytes;
    double us;
  };
  std::vector<PointRecord> pts;
  for (const M& m : {M{"h200-a", 8, 1024, 20}, M{"h200-a", 8, 1 << 20, 40}, M{"b200-b", 8, 1024, 25},
                     M{"b200-b", 8, 1 << 20, 30}, M{"b200-b", 4, 1024, 18}}) {
    PointRecord p;
    p.index = pts.size();
    p.kind = PointKind::Measured;
    p.algorithm = "ring";
    p.system = m.system;
    p.gpus = m.gpus;
    p.bytes = m.bytes;
    p.measured_us = m.us;
    p.busbw_GBps = 1e-3 * static_cast<double>(m.bytes) / m.us;
    if (pts.size() < 4) p.extra = {{"in_place_us", m.us - 0.5}};  // (the last row: a file with one time)
    pts.push_back(p);
  }
  AnalysisTable t = build_table(run, pts);
  ASSERT_NE(t.find("measured_us"), nullptr);
  ASSERT_NE(t.find("in_place_us"), nullptr);
  EXPECT_EQ(t.find("in_place_us")->unit, "µs");
  {  // the in-place time plots where a row has one
    PlotQuery ip = default_query(t);
    ip.y = "in_place_us";
    const PlotData d = make_plot(t, ip);
    ASSERT_TRUE(d.empty_reason.empty()) << d.empty_reason;
    std::size_t k = 0;
    for (const Series& ser : d.facets.at(0).series)
      for (const SeriesPoint& pt : ser.points) {
        EXPECT_EQ(pt.y, pts.at(t.rows.at(pt.row).point_index).measured_us - 0.5);
        ++k;
      }
    EXPECT_EQ(k, 4u);
  }
  EXPECT_EQ(t.find("measured_us")->unit, "µs");
  ASSERT_NE(t.find("busbw_GBps"), nullptr);
  EXPECT_EQ(t.find("time_us"), nullptr);
  ASSERT_NE(t.find("system"), nullptr);
  EXPECT_FALSE(t.find("system")->numeric);
  EXPECT_EQ(t.distinct(t.axis_index("fabric.gpus")).size(), 2u);
  const PlotQuery q = default_query(t);
  EXPECT_EQ(q.x, "collective.bytes");
  EXPECT_EQ(q.y, "measured_us");
  PlotData pd = make_plot(t, q);
  ASSERT_TRUE(pd.empty_reason.empty()) << pd.empty_reason;
  ASSERT_EQ(pd.facets.size(), 1u);
  EXPECT_EQ(pd.facets[0].series.size(), 3u);  // (h200-a, 8), (b200-b, 8), (b200-b, 4)
  std::size_t n = 0;
  for (const Series& ser : pd.facets[0].series)
    for (const SeriesPoint& pt : ser.points) {
      const PointRecord& pr = pts.at(t.rows.at(pt.row).point_index);
      EXPECT_EQ(pt.y, pr.measured_us);
      EXPECT_EQ(pt.x, static_cast<double>(pr.bytes));
      ++n;
    }
  EXPECT_EQ(n, pts.size());
}

// Forty curves in one panel are unreadable: the default view of the fabrics
// sweep (5 presets x 8 algorithms) puts each preset in its own panel.
TEST(AnalysisAutoFacet, ManyCurvesSplitIntoPanelsByTheAxisThatLeavesFewest) {
  test::TempDir dir;
  const Stored s = run_example(dir / "f.scindb", "fabrics");
  const AnalysisTable t = build_table(s.run, s.points);
  const PlotQuery q = default_query(t);
  EXPECT_EQ(q.x, "collective.bytes");
  EXPECT_EQ(q.facet, "preset");
  const PlotData p = make_plot(t, q);
  ASSERT_TRUE(p.empty_reason.empty()) << p.empty_reason;
  EXPECT_EQ(p.facets.size(), 5u);
  std::size_t curves = 0;
  for (const Facet& f : p.facets) {
    EXPECT_LE(f.series.size(), kMaxCurvesPerPanel);
    curves += f.series.size();
  }
  PlotQuery one = q;
  one.facet.clear();
  EXPECT_EQ(make_plot(t, one).facets.at(0).series.size(), curves);  // the same curves, one panel
  EXPECT_GT(curves, kMaxCurvesPerPanel);
  // A readable panel stays one panel; x itself is never the facet.
  EXPECT_EQ(auto_facet(t, q, 100), "");
  one.x = "preset";
  EXPECT_NE(auto_facet(t, one), "preset");
}

}  // namespace
}  // namespace scin::analysis
