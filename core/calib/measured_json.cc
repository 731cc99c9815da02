// nccl-tests' JSON report (`all_reduce_perf -J FILE`, src/util.cu, "version" 2): the same
// facts as its text output, read into the same tables (measured.cc) and checked the same way.
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_input.h"
#include "calib/measured.h"
#include "calib/measured_text.h"

namespace scin {

using namespace measured_text;

namespace {

// A number member of `o`, or `fallback` where it is absent or null; an error naming `where`
// and the key where it is something else.
double number_at(const nlohmann::json& o, const char* key, const std::string& where, double fallback) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) return fallback;
  if (!it->is_number()) throw Error(fmt::format("{}.{}: expected a number, got {}", where, key, it->dump()));
  return it->get<double>();
}

// A string member of `o`, or "" where it is absent or null; an error where it is something else.
std::string string_at(const nlohmann::json& o, const char* key, const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) return "";
  if (!it->is_string()) throw Error(fmt::format("{}.{}: expected a string, got {}", where, key, it->dump()));
  return it->get<std::string>();
}

// Whether `v` is a whole number in [0, max] (so that a cast to an integer is defined).
bool whole(double v, double max) { return v >= 0 && v <= max && v == std::floor(v); }

}  // namespace

std::vector<NcclTestsTable> parse_nccl_tests_json(const std::string& text, const std::string& origin,
                                                  std::vector<std::string>* ignored) {
  // (The shared reader: a number too large for a double, e.g. 134E17728, is an
  // Error naming the file, not an escaping json::out_of_range; nesting is bounded.)
  const nlohmann::json doc = parse_json_text(text, origin);
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
    throw Error(fmt::format("{}: not an nccl-tests JSON report (all_reduce_perf -J): no \"results\" list", origin));
  NcclTestsTable t;
  t.first_line = 1;
  std::map<std::string, std::string> env;
  if (const auto a = doc.find("args"); a != doc.end() && a->is_array())
    for (const auto& x : *a)
      if (x.is_string())
        if (const std::string other = other_nccl_test_in(x.get<std::string>()); !other.empty())
          throw Error(fmt::format("{}: args: {}", origin, other_benchmark(other)));
  if (const auto e = doc.find("env"); e != doc.end() && e->is_array())
    for (const auto& x : *e)
      if (x.is_string() && x.get<std::string>().rfind("NCCL_", 0) == 0) scan_env(x.get<std::string>(), env);
  t.env = env;
  if (const auto v = doc.find("nccl_version"); v != doc.end() && v->is_number_integer()) {
    const long code = v->get<long>();  // NCCL_VERSION_CODE: X * 10000 + Y * 100 + Z (NCCL >= 2.9)
    t.nccl_version = code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100) : std::to_string(code);
  }
  const nlohmann::json config = doc.value("config", nlohmann::json::object());
  if (!config.is_object()) throw Error(fmt::format("{}: config: expected an object", origin));
  auto count = [&](const char* key, int fallback) {
    const double v = number_at(config, key, origin + ": config", fallback);
    if (!whole(v, 1e6) || v < 1)
      throw Error(fmt::format("{}: config.{}: '{}' is not a positive count", origin, key, config[key].dump()));
    return static_cast<int>(v);
  };
  t.threads = count("nthreads", 1);
  t.gpus_per_thread = count("ngpus", 1);
  t.agg_iters = count("aggregated_iterations", 1);
  const double graph = number_at(config, "graph", origin + ": config", 0);
  if (!whole(graph, 1e9)) throw Error(fmt::format("{}: config.graph: '{}' is not a count of graph launches", origin, graph));
  t.graph_launches = static_cast<int>(graph);
  // The devices: one entry per process (each process's first rank: util.cu parses the first line
  // of each process's block), each process driving nThread x nGpus ranks.
  if (const auto d = config.find("devices"); d != config.end() && d->is_array() && !d->empty()) {
    for (const auto& dev : *d)
      if (t.device.empty() && dev.is_object() && dev.contains("device_info") && dev["device_info"].is_string())
        t.device = dev["device_info"];
    const double ranks = static_cast<double>(d->size()) * t.threads * t.gpus_per_thread;
    if (ranks > 1e6)
      throw Error(fmt::format("{}: config: {} devices x nthreads {} x ngpus {} ranks: more than 1e6", origin, d->size(), t.threads,
                              t.gpus_per_thread));
    t.processes = static_cast<int>(d->size());
    t.ranks = static_cast<int>(ranks);
  }
  const auto& results = doc["results"];
  std::vector<RowBandwidth> bws;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const std::string where = fmt::format("{}:results[{}]", origin, k);
    const auto& x = results[k];
    if (!x.is_object()) throw Error(fmt::format("{}: expected an object", where));
    const double size = number_at(x, "size", where, -1), elems = number_at(x, "count", where, -1);
    if (!whole(size, 1e18) || !whole(elems, 1e18))
      throw Error(fmt::format("{}: size and count: expected whole numbers (bytes, elements)", where));
    if (size == 0) {  // (-b 0)
      if (ignored) ignored->push_back(zero_byte_row(where));
      continue;
    }
    MeasuredRow r;
    const std::string type = string_at(x, "type", where);
    int esize = 0;
    if (!nccl_type(type, esize, r.dtype)) throw Error(fmt::format("{}.type: unknown nccl-tests type '{}'", where, type));
    if (elems * esize != size)
      throw Error(fmt::format("{}: size {} is not count {} x {} bytes of {}", where, size, elems, esize, type));
    const auto oop = x.find("out_of_place");
    if (oop == x.end() || oop->is_null()) {
      if (ignored) ignored->push_back(fmt::format("{}: no out-of-place time (a trace replay's row)", where));
      continue;
    }
    if (!oop->is_object()) throw Error(fmt::format("{}.out_of_place: expected an object", where));
    if (oop->contains("cpu_time")) t.cpu_time = true;
    r.measured_us = number_at(*oop, oop->contains("cpu_time") ? "cpu_time" : "time", where + ".out_of_place", -1);
    if (!(r.measured_us > 0)) throw Error(fmt::format("{}.out_of_place.time: must be a positive number of us", where));
    const double alg = number_at(*oop, "alg_bw", where + ".out_of_place", -1);
    r.busbw_GBps = number_at(*oop, "bus_bw", where + ".out_of_place", -1);
    if (const auto ip = x.find("in_place"); ip != x.end() && ip->is_object())
      r.in_place_us = number_at(*ip, ip->contains("cpu_time") ? "cpu_time" : "time", where + ".in_place", -1);
    r.bytes = static_cast<std::uint64_t>(size);
    r.source = where;
    r.notes = string_at(x, "redop", where);
    if (alg >= 0 && r.busbw_GBps >= 0) bws.push_back({where, alg, r.busbw_GBps});
    t.rows.push_back(std::move(r));
  }
  if (t.rows.empty()) throw Error(fmt::format("{}: no nccl-tests data rows found", origin));
  check_all_reduce_busbw(t, bws, "config.devices x nthreads x ngpus");
  std::vector<NcclTestsTable> tables;
  tables.push_back(std::move(t));
  finish_nccl_tests_tables(tables, origin);
  return tables;
}

}  // namespace scin
