#include "calib/import.h"

#include <nlohmann/json.hpp>

#include "calib/validate.h"
#include "store/store.h"

namespace scin {

std::vector<PointRecord> measured_points(const MeasuredFile& m) {
  std::vector<PointRecord> pts;
  for (const auto& r : m.rows) {
    PointRecord p;
    p.index = pts.size();
    p.kind = PointKind::Measured;
    p.algorithm = r.algorithm;
    p.dtype = r.dtype;
    p.bytes = r.bytes;
    p.gpus = r.gpus;
    p.system = r.system;
    p.measured_us = r.measured_us;
    p.busbw_GBps = r.busbw_GBps < 0 ? 0 : r.busbw_GBps;
    p.source = r.source;
    p.extra = {{"gpus_per_process", r.gpus_per_process}, {"notes", r.notes}, {"regime", to_string(regime_of(r.bytes))}};
    if (r.in_place_us >= 0) p.extra["in_place_us"] = r.in_place_us;
    if (r.busbw_GBps < 0) p.extra["busbw_reported"] = false;
    pts.push_back(std::move(p));
  }
  return pts;
}

std::int64_t import_measured(Store& store, const MeasuredFile& m, const MeasuredRunMeta& meta) {
  RunStart st;
  st.experiment = meta.experiment;
  st.name = meta.name.empty() ? m.path.filename().string() : meta.name;
  st.notes = meta.notes;
  st.tags = meta.tags;
  st.kind = PointKind::Measured;
  st.engine = "measured";
  nlohmann::json spec = {{"kind", "measured"}, {"file", m.path.filename().string()}, {"format", m.format},
                         {"sha256", m.sha256}, {"rows", m.rows.size()}};
  for (const auto& t : m.tables)
    spec["tables"].push_back({{"first_line", t.first_line}, {"ranks", t.ranks}, {"processes", t.processes},
                              {"threads", t.threads}, {"gpus_per_thread", t.gpus_per_thread},
                              {"device", t.device}, {"nccl_version", t.nccl_version}, {"env", t.env},
                              {"rows", t.rows.size()}});
  if (!m.ignored.empty()) spec["ignored_lines"] = m.ignored;
  if (!m.skipped_tables.empty()) spec["skipped_tables"] = m.skipped_tables;
  st.spec = spec;
  st.points_total = m.rows.size();
  st.threads = 1;
  const std::int64_t id = store.begin_run(st);
  store.append_points(id, measured_points(m));
  store.finish_run(id, RunStatus::Done);
  return id;
}

}  // namespace scin
