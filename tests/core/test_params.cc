// The parameter registry and presets: ranges, errors that name the field,
// round trips through JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "base/error.h"
#include "base/json_input.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "base/units.h"
#include "error_of.h"

using namespace scin;

TEST(Params, PathsAreUniqueAndDocumented) {
  std::set<std::string> seen;
  for (const auto& p : params()) {
    EXPECT_TRUE(seen.insert(p.path).second) << p.path;
    EXPECT_FALSE(p.help.empty()) << p.path;
    EXPECT_FALSE(p.label.empty()) << p.path;
    EXPECT_EQ(p.path.find("gbps"), std::string::npos) << "ambiguous unit in " << p.path;
  }
  EXPECT_NE(find_param("links.bandwidth_GBps"), nullptr);
  EXPECT_NE(find_param("switch.isa.max_outstanding_bytes"), nullptr);
  EXPECT_EQ(find_param("links.bandwidth"), nullptr);
}

TEST(Params, DefaultsAreInRange) { EXPECT_NO_THROW(validate(Config{})); }

TEST(Params, SetParsesUnitsAndSuffixes) {
  Config c;
  set_param(c, "links.bandwidth_GBps", "900");
  EXPECT_DOUBLE_EQ(c.links.bandwidth_GBps, 900);
  set_param(c, "switch.isa.buffer_bytes", "4M");
  EXPECT_EQ(c.sw.isa.buffer_bytes, 4u << 20);
  apply_assignment(c, "switch.isa.regulation=none");
  EXPECT_EQ(c.sw.isa.regulation, Regulation::None);
  apply_assignment(c, "switch.multicast=false");
  EXPECT_FALSE(c.sw.multicast);
  apply_assignment(c, "ring.protocol=LL128");
  EXPECT_EQ(c.ring.protocol, RingProtocol::LL128);
  EXPECT_DOUBLE_EQ(get_param_number(c, "ring.protocol"), 2.0);
}

TEST(Params, ErrorsNameTheFieldAndRange) {
  Config c;
  auto e = error_of([&] { set_param(c, "links.bandwidth_GBps", "0"); });
  EXPECT_NE(e.find("links.bandwidth_GBps"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "links.bandwidth_GBps", "-5"); });
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "fabric.gpus", "1"); });
  EXPECT_NE(e.find("fabric.gpus"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "fabric.gpus", "10000000"); });
  EXPECT_NE(e.find("2 to 1024"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "fabric.gpus", "2.5"); });
  EXPECT_NE(e.find("whole number"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "switch.isa.regulation", "sometimes"); });
  EXPECT_NE(e.find("none, paced"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "links.bandwidth_GBps", "fast"); });
  EXPECT_NE(e.find("not a number"), std::string::npos) << e;
  e = error_of([&] { apply_assignment(c, "no.such.path=3"); });
  EXPECT_NE(e.find("unknown parameter 'no.such.path'"), std::string::npos) << e;
  e = error_of([&] { apply_assignment(c, "links.bandwidth_GBps"); });
  EXPECT_NE(e.find("PATH=VALUE"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "switch.isa.waves", "0"); });
  EXPECT_NE(e.find("switch.isa.waves"), std::string::npos) << e;
  e = error_of([&] { set_param(c, "switch.isa.buffer_bytes", "0"); });
  EXPECT_NE(e.find("switch.isa.buffer_bytes"), std::string::npos) << e;
}

TEST(Params, CrossFieldRules) {
  Config c;
  c.fabric.topology = Topology::Mesh;
  c.fabric.planes = 4;
  EXPECT_NE(error_of([&] { validate(c); }).find("fabric.planes"), std::string::npos);
  Config d;
  d.sw.isa.enabled = true;
  d.sw.isa.buffer_bytes = 128;  // smaller than one 256-byte packet
  EXPECT_NE(error_of([&] { validate(d); }).find("switch.isa.buffer_bytes"), std::string::npos);
}

TEST(Units, SizesParseLikeNcclTests) {
  EXPECT_EQ(parse_size_bytes("8", "b"), 8u);
  EXPECT_EQ(parse_size_bytes("64K", "b"), 65536u);
  EXPECT_EQ(parse_size_bytes("1M", "b"), 1048576u);
  EXPECT_EQ(parse_size_bytes("1G", "b"), 1073741824u);
  EXPECT_EQ(parse_size_bytes("2GiB", "b"), 2147483648u);
  EXPECT_THROW(parse_size_bytes("0", "b"), Error);
  EXPECT_THROW(parse_size_bytes("-8", "b"), Error);
  EXPECT_THROW(parse_size_bytes("8X", "b"), Error);
  EXPECT_THROW(parse_size_bytes("", "b"), Error);
  EXPECT_THROW(parse_size_bytes("99999999999999999999999", "b"), Error);
  EXPECT_EQ(format_size_bytes(8), "8 B");
  EXPECT_EQ(format_size_bytes(1024), "1 KiB");
  EXPECT_EQ(format_size_bytes(3u << 19), "1.5 MiB");
  EXPECT_EQ(format_size_bytes(1ull << 30), "1 GiB");
}

TEST(Presets, AllLoadAndDocumentSources) {
  auto list = list_presets();
  std::set<std::string> names;
  for (const auto& p : list) names.insert(p.name);
  for (const char* n : {"hgx-h100-8", "hgx-h200-8", "hgx-b200-8", "scin-fpga-4", "mesh-8"}) {
    ASSERT_TRUE(names.count(n)) << n;
    Config c = load_preset(n);
    EXPECT_EQ(c.name, n);
    EXPECT_FALSE(c.description.empty());
    EXPECT_FALSE(preset_sources(n).empty()) << n << " documents no sources";
  }
  EXPECT_EQ(load_preset("scin-fpga-4").fabric.gpus, 4);
  EXPECT_EQ(load_preset("mesh-8").fabric.topology, Topology::Mesh);
}

TEST(Presets, JsonRoundTripKeepsEveryParameter) {
  for (const auto& info : list_presets()) {
    Config a = load_preset(info.name);
    Config b = config_from_json(config_to_json(a));
    for (const auto& p : params())
      EXPECT_EQ(get_param_text(a, p.path), get_param_text(b, p.path)) << info.name << " " << p.path;
    EXPECT_EQ(a.name, b.name);
  }
}

TEST(Presets, BadFilesGiveClearErrors) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "scin_test_presets";
  fs::create_directories(dir);
  auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto e = error_of([&] { load_preset(write("bad.json", "{ \"fabric\": { \"gpus\": 8, }")); });
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
  e = error_of([&] { load_preset(write("unknown.json", R"({"links": {"speed": 3}})")); });
  EXPECT_NE(e.find("unknown parameter 'links.speed'"), std::string::npos) << e;
  e = error_of([&] { load_preset(write("range.json", R"({"links": {"bandwidth_GBps": -1}})")); });
  EXPECT_NE(e.find("links.bandwidth_GBps"), std::string::npos) << e;
  e = error_of([&] { load_preset(write("type.json", R"({"fabric": {"gpus": "many"}})")); });
  EXPECT_NE(e.find("fabric.gpus"), std::string::npos) << e;
  e = error_of([&] { load_preset(write("array.json", "[1, 2]")); });
  EXPECT_NE(e.find("JSON object"), std::string::npos) << e;
  e = error_of([&] { load_preset("no-such-preset"); });
  EXPECT_NE(e.find("unknown preset 'no-such-preset'"), std::string::npos) << e;
  fs::remove_all(dir);
}

TEST(Presets, AFileEditedBetweenLoadsIsReadAgain) {
  // load_preset keeps the Config of a text it parsed; an edit of the same
  // size (a value of as many digits) must still be seen, and a broken edit
  // must fail rather than give the last good Config.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "scin_test_preset_edit";
  fs::create_directories(dir);
  const std::string file = (dir / "lab.json").string();
  std::ofstream(file) << R"({"fabric": {"gpus": 8}, "links": {"latency_ns": 150}})";
  EXPECT_EQ(load_preset(file).links.latency_ns, 150.0);
  EXPECT_EQ(load_preset(file).links.latency_ns, 150.0);
  std::ofstream(file) << R"({"fabric": {"gpus": 8}, "links": {"latency_ns": 250}})";
  EXPECT_EQ(load_preset(file).links.latency_ns, 250.0);
  EXPECT_EQ(load_preset(file).fabric.gpus, 8);
  std::ofstream(file) << R"({"fabric": {"gpus": 8}, "links": {"latency_ns": 250})";
  EXPECT_NE(error_of([&] { load_preset(file); }).find("malformed JSON"), std::string::npos);
  fs::remove_all(dir);
}

// A count (scin quant --elements) takes the size grammar without the B, and its
// errors speak of the counted thing, never of bytes.
TEST(Units, CountsParseLikeSizesButSayWhatTheyCount) {
  EXPECT_EQ(parse_count("1M", "--elements", "elements"), 1048576u);
  EXPECT_EQ(parse_count("1.5K", "--elements", "elements"), 1536u);
  EXPECT_EQ(parse_count(" 1000 ", "--elements", "elements"), 1000u);
  auto e = error_of([] { parse_count("2.5", "--elements", "elements"); });
  EXPECT_NE(e.find("--elements: '2.5' is not a valid count (not a whole number of elements)"), std::string::npos) << e;
  EXPECT_EQ(e.find("bytes"), std::string::npos) << e;
  e = error_of([] { parse_count("1MB", "--elements", "elements"); });
  EXPECT_NE(e.find("unknown suffix 'MB'"), std::string::npos) << e;
  e = error_of([] { parse_count("32M", "--elements", "elements", 1, 16u << 20); });
  EXPECT_NE(e.find("--elements: 32M is out of range 1..16777216 elements"), std::string::npos) << e;
  // Sizes keep every B form they had, and no bare "iB".
  EXPECT_EQ(parse_size_bytes("8B", "b"), 8u);
  EXPECT_EQ(parse_size_bytes("8kib", "b"), 8192u);
  EXPECT_NE(error_of([] { parse_size_bytes("8iB", "-b"); }).find("unknown suffix"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size_bytes("8BB", "-b"); }).find("unknown suffix"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size_bytes("0", "-b"); }).find("out of range 1..4611686018427387904 bytes (1 B to 4 EiB)"),
            std::string::npos);
  EXPECT_EQ(error_of([] { parse_size_bytes("2K", "--x", 1, 1024); }), "--x: 2K is out of range 1..1024 bytes (1 B to 1 KiB)");
  EXPECT_EQ(error_of([] { parse_size_bytes("0", "--x", 1, 512); }), "--x: 0 is out of range 1..512 bytes");
}

// ---- the one size grammar (issue 12: -b 8MB and --set ...=8MB accept the same forms)

TEST(Units, OneSizeGrammarForFlagsAndParameters) {
  EXPECT_EQ(parse_size_bytes("1.5M", "b"), 1572864u);
  EXPECT_EQ(parse_size_bytes("8MiB", "b"), 8u << 20);
  EXPECT_EQ(parse_size_bytes("8MB", "b"), 8u << 20);
  EXPECT_EQ(parse_size_bytes("8K", "b"), 8192u);
  EXPECT_EQ(parse_size_bytes("0.5K", "b"), 512u);
  EXPECT_EQ(parse_size_bytes(" 2 G ", "b"), 2u << 30);
  EXPECT_EQ(parse_size_bytes("1T", "b"), 1ull << 40);
  EXPECT_NE(error_of([] { parse_size_bytes("1.3", "-b"); }).find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size_bytes("1.0000000001K", "-b"); }).find("-b"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size_bytes("8Q", "-b"); }).find("unknown suffix 'Q'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size_bytes("20000000000000000000T", "-b"); }).find("too large"), std::string::npos);
  EXPECT_NE(error_of([] { parse_size_bytes(".", "-b"); }).find("no number"), std::string::npos);
  // The same text sets a byte parameter to the same value.
  for (const char* text : {"1.5M", "8MiB", "8MB", "8K", "4096"}) {
    Config c;
    set_param(c, "switch.isa.buffer_bytes", text);
    EXPECT_EQ(c.sw.isa.buffer_bytes, parse_size_bytes(text, "b")) << text;
  }
  Config c;
  EXPECT_NE(error_of([&] { set_param(c, "switch.isa.buffer_bytes", "2T"); }).find("out of range"), std::string::npos);
  set_param(c, "packet.header_bytes", "0");   // zero is a size where the range allows it
  EXPECT_EQ(c.packet.header_bytes, 0u);
}

// ---- the JSON reader (issue 13 items 2, 5)


TEST(JsonInput, SkippedTopLevelMembersAreCheckedButNotKept) {
  JsonParseOptions opt;
  opt.skip_top_level = {"calibration"};
  const auto j = parse_json_text(R"({"a": 1, "calibration": {"x": [1, {"y": 2}]}, "b": {"calibration": 3}})", "t", opt);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"a": 1, "b": {"calibration": 3}})"));   // only the top level's
  // A skipped member is still parsed: its syntax errors are reported.
  EXPECT_NE(error_of([&] { parse_json_text(R"({"calibration": {"x": [1, }, "a": 1})", "t", opt); })
                .find("t: malformed JSON"),
            std::string::npos);
  // A preset's provenance is skipped: the same Config as from the whole document.
  const auto file = resource_dir() / "presets" / "hgx-h200-8.json";
  const Config whole = config_from_json(read_json_document(file));
  const Config loaded = load_preset(file.string());
  for (const auto& p : params()) EXPECT_EQ(get_param_text(loaded, p.path), get_param_text(whole, p.path)) << p.path;
}

TEST(JsonInput, DeepNestingIsRejectedWithoutRecursion) {
  // 200k levels: parsing must stop at the limit, not overflow the stack.
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  EXPECT_NE(error_of([&] { parse_json_text(deep, "x.json"); }).find("x.json: JSON nesting is deeper than 64 levels"),
            std::string::npos);
  std::string obj;
  for (int i = 0; i < 200000; ++i) obj += "{\"a\":";
  obj += "1" + std::string(200000, '}');
  EXPECT_NE(error_of([&] { parse_json_text(obj, "p"); }).find("deeper than 64"), std::string::npos);
  EXPECT_TRUE(parse_json_or_discarded(obj).is_discarded());
  // 64 levels are fine; 65 are not.
  std::string ok64 = std::string(64, '[') + std::string(64, ']');
  EXPECT_NO_THROW(parse_json_text(ok64, "p"));
  EXPECT_THROW(parse_json_text("[" + ok64 + "]", "p"), Error);
  EXPECT_NE(error_of([] { parse_json_text("{\"a\": }", "f.json"); }).find("f.json: malformed JSON"), std::string::npos);
  EXPECT_TRUE(parse_json_or_discarded("not json").is_discarded());
}

TEST(JsonInput, IntegersAreRangeCheckedNeverWrapped) {
  using nlohmann::json;
  EXPECT_EQ(json_int(json(8), "inference.tp", 1, 1024), 8);
  EXPECT_EQ(json_int(json(8.0), "inference.tp", 1, 1024), 8);
  EXPECT_EQ(error_of([] { json_int(json(4294967304ull), "inference.tp", 1, 1024); }),
            "inference.tp: 4294967304 is out of range 1..1024");
  EXPECT_NE(error_of([] { json_int(json(-1), "input.channels", 1, 10); }).find("-1 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_int(json(2.5), "x", 1, 10); }).find("not a whole number"), std::string::npos);
  EXPECT_NE(error_of([] { json_int(json("8"), "x", 1, 10); }).find("expected an integer"), std::string::npos);
  EXPECT_NE(error_of([] { json_int(json(true), "x", 1, 10); }).find("got true"), std::string::npos);
  EXPECT_NE(error_of([] { json_uint(json(-1), "input.seed", 0, UINT64_MAX); }).find("input.seed: -1 is out of range"),
            std::string::npos);
  EXPECT_EQ(json_uint(json(18446744073709551615ull), "s", 0, UINT64_MAX), UINT64_MAX);
  // 1e300 to an integer is undefined behaviour in C++: it must be a range error.
  EXPECT_NE(error_of([] { json_uint(json(1e300), "collective.bytes", 1, 1ull << 62); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_int(json(1e300), "x", INT64_MIN, INT64_MAX); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_uint(json(18446744073709551616.0), "x", 0, UINT64_MAX); }).find("out of range"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(json_real(json(0.5), "f", 0, 1), 0.5);
  EXPECT_NE(error_of([] { json_real(json(2), "f", 0, 1); }).find("f: 2 is out of range 0..1"), std::string::npos);
  EXPECT_EQ(format_number(1e30), "1e+30");
  EXPECT_EQ(format_number(4294967304.0), "4294967304");
}

TEST(Presets, DeepOrUnknownNestingIsAnErrorNotACrash) {
  const auto dir = std::filesystem::temp_directory_path() / "scin-test-preset-deep";
  std::filesystem::create_directories(dir);
  std::string deep = "{\"links\":";
  for (int i = 0; i < 200000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(200001, '}');
  std::ofstream(dir / "deep.json") << deep;
  EXPECT_NE(error_of([&] { load_preset((dir / "deep.json").string()); }).find("deeper than 64"), std::string::npos);
  std::ofstream(dir / "group.json") << R"({"links": {"nosuch": {"x": 1}}})";
  EXPECT_NE(error_of([&] { load_preset((dir / "group.json").string()); }).find("unknown parameter group 'links.nosuch'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_preset(dir.string()); }).find("is a directory"), std::string::npos);
  std::ofstream(dir / "wrap.json") << R"({"fabric": {"gpus": 4294967304}})";
  EXPECT_NE(error_of([&] { load_preset((dir / "wrap.json").string()); }).find("fabric.gpus: 4294967304 is out of range"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}
