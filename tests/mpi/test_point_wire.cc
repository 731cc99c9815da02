// The byte encoding worker ranks send their points in: every stored cell of
// every point kind survives exactly; damaged input is an Error, not a crash.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "base/error.h"
#include "point_compare.h"
#include "sweep/point_wire.h"

namespace scin {
namespace {

std::vector<PointRecord> samples() {
  std::vector<PointRecord> v;
  PointRecord c;
  c.index = 41;
  c.kind = PointKind::Collective;
  c.axes = {{"collective.bytes", 1024}, {"links.latency_ns", 0.1 + 0.2}, {"preset", "gb200-nvl72"}};
  c.algorithm = "scin-inq";
  c.variant = "LL128";
  c.dtype = "bf16";
  c.bytes = (1ull << 40) + 7;
  c.gpus = 72;
  c.engine = "packet";
  c.time_us = 1.0 / 3.0;
  c.algbw_GBps = std::numeric_limits<double>::denorm_min();
  c.busbw_GBps = -0.0;
  c.max_link_bytes = 1e300;
  for (int t = 0; t < static_cast<int>(Term::Count); ++t) c.breakdown.ns[t] = std::nextafter(t * 1.1, 100.0);
  c.extra = {{"events", 123456789012345ull}, {"note", "µs — ünïcode"}, {"nested", {1.5, nullptr, true}}};
  v.push_back(c);
  PointRecord skipped;
  skipped.index = 42;
  skipped.status = PointStatus::Skipped;
  skipped.message = "nvls needs a switch";
  v.push_back(skipped);
  PointRecord q;
  q.index = 7;
  q.kind = PointKind::Quant;
  q.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  q.sqnr_dB = std::numeric_limits<double>::infinity();
  q.payload_ratio = 0.53125;
  v.push_back(q);
  PointRecord inf;
  inf.index = 8;
  inf.kind = PointKind::Inference;
  inf.status = PointStatus::Failed;
  inf.message = std::string("a\0b", 3);
  inf.ttft_us = 123.456;
  inf.tpot_us = 7.0e-9;
  v.push_back(inf);
  PointRecord m;
  m.kind = PointKind::Measured;
  m.system = "dgx-h200-a";
  m.source = "nccl-tests.log:12";
  m.measured_us = 9.75;
  v.push_back(m);
  return v;
}

TEST(PointWire, EveryStoredCellOfEveryKindRoundTripsExactly) {
  const auto in = samples();
  std::string bytes = "junk";   // appends after what is there
  wire::encode_points(in, bytes);
  std::size_t pos = 4;
  const auto out = wire::decode_points(bytes, pos);
  EXPECT_EQ(pos, bytes.size());
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(test::stored_difference(in[i], out[i]), "") << "point " << i;
    EXPECT_EQ(out[i].index, in[i].index);
    EXPECT_EQ(out[i].status, in[i].status);
  }
  EXPECT_TRUE(std::isnan(out[2].rel_l2));
  EXPECT_TRUE(std::signbit(out[0].busbw_GBps));
  EXPECT_EQ(out[0].axes, in[0].axes);
  EXPECT_EQ(out[0].extra, in[0].extra);
  EXPECT_EQ(out[3].message.size(), 3u);
}

TEST(PointWire, AnEmptyBatchIsEightBytes) {
  std::string bytes;
  wire::encode_points({}, bytes);
  EXPECT_EQ(bytes.size(), 8u);
  std::size_t pos = 0;
  EXPECT_TRUE(wire::decode_points(bytes, pos).empty());
}

TEST(PointWire, TruncatedOrDamagedInputIsAnError) {
  std::string bytes;
  wire::encode_points(samples(), bytes);
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{9}, bytes.size() / 2, bytes.size() - 1}) {
    std::size_t pos = 0;
    EXPECT_THROW(wire::decode_points(bytes.substr(0, cut), pos), Error) << "cut at " << cut;
  }
  std::string bad = bytes;
  bad[8] = 9;   // the first point's kind
  std::size_t pos = 0;
  EXPECT_THROW(wire::decode_points(bad, pos), Error);
  bad = bytes;
  bad[9] = 7;   // the first cell's tag
  pos = 0;
  EXPECT_THROW(wire::decode_points(bad, pos), Error);
  // A count far beyond the message is refused before anything is allocated.
  std::string huge;
  wire::put_u64(huge, 1ull << 60);
  pos = 0;
  EXPECT_THROW(wire::decode_points(huge, pos), Error);
}

}  // namespace
}  // namespace scin
