#include "sweep/point_wire.h"

#include <cstring>
#include <variant>

#include <fmt/format.h>

#include "base/error.h"
#include "store/point_kinds.h"

namespace scin::wire {

namespace {

enum Tag : unsigned char { kNull = 0, kInt = 1, kReal = 2, kText = 3 };

void need(const std::string& in, std::size_t pos, std::size_t n) {
  if (pos > in.size() || in.size() - pos < n)
    throw Error(fmt::format("point message: truncated at byte {} (needs {} more of {})", pos, n, in.size()));
}

}  // namespace

void put_u64(std::string& out, std::uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

std::uint64_t get_u64(const std::string& in, std::size_t& pos) {
  need(in, pos, 8);
  std::uint64_t v;
  std::memcpy(&v, in.data() + pos, 8);
  pos += 8;
  return v;
}

void encode_points(const std::vector<PointRecord>& pts, std::string& out) {
  put_u64(out, pts.size());
  for (const PointRecord& p : pts) {
    out.push_back(static_cast<char>(p.kind));
    for (const PointColumn& c : point_kind_info(p.kind).columns) {
      const ColumnValue v = c.get(p);
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        out.push_back(static_cast<char>(kInt));
        put_u64(out, static_cast<std::uint64_t>(*i));
      } else if (const auto* d = std::get_if<double>(&v)) {
        out.push_back(static_cast<char>(kReal));
        std::uint64_t bits;
        std::memcpy(&bits, d, 8);
        put_u64(out, bits);
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        out.push_back(static_cast<char>(kText));
        put_u64(out, s->size());
        out.append(*s);
      } else {
        out.push_back(static_cast<char>(kNull));
      }
    }
  }
}

std::vector<PointRecord> decode_points(const std::string& in, std::size_t& pos) {
  const std::uint64_t n = get_u64(in, pos);
  // Each record takes at least one byte per column: a count beyond the message is damage, not a size to reserve.
  if (n > in.size() - pos) throw Error(fmt::format("point message: {} points announced in {} bytes", n, in.size()));
  std::vector<PointRecord> pts(static_cast<std::size_t>(n));
  for (PointRecord& p : pts) {
    need(in, pos, 1);
    const auto kind = static_cast<unsigned char>(in[pos++]);
    if (kind > static_cast<unsigned char>(PointKind::Measured))
      throw Error(fmt::format("point message: unknown point kind {} at byte {}", kind, pos - 1));
    p.kind = static_cast<PointKind>(kind);
    for (const PointColumn& c : point_kind_info(p.kind).columns) {
      need(in, pos, 1);
      const auto tag = static_cast<unsigned char>(in[pos++]);
      ColumnValue v;
      switch (tag) {
        case kNull: break;
        case kInt: v = static_cast<std::int64_t>(get_u64(in, pos)); break;
        case kReal: {
          const std::uint64_t bits = get_u64(in, pos);
          double d;
          std::memcpy(&d, &bits, 8);
          v = d;
          break;
        }
        case kText: {
          const std::uint64_t len = get_u64(in, pos);
          need(in, pos, len);
          v = in.substr(pos, static_cast<std::size_t>(len));
          pos += static_cast<std::size_t>(len);
          break;
        }
        default: throw Error(fmt::format("point message: bad cell tag {} at byte {}", tag, pos - 1));
      }
      c.set(p, v);
    }
  }
  return pts;
}

}  // namespace scin::wire
