// A compact, exact byte encoding of result points, for handing them between
// processes (the MPI sweep: worker ranks send their points to rank 0).
//
// A record is encoded as the stored columns of its kind (store/point_kinds.h:
// the one column table), so what rank 0 decodes and writes is exactly what the
// evaluating rank would have written: integers and texts as they are, reals as
// their IEEE-754 bits (NaN, -0 and every last bit survive), JSON columns as the
// text the store keeps. Host byte order: every rank of a job runs the same
// binary on the same architecture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"

namespace scin::wire {

/// Appends the encoding of `pts` to `out`.
void encode_points(const std::vector<PointRecord>& pts, std::string& out);
/// Decodes what encode_points wrote, starting at `pos` (advanced past it).
/// Throws Error on truncated or malformed input (naming the byte offset).
std::vector<PointRecord> decode_points(const std::string& in, std::size_t& pos);

/// Fixed-size unsigned integers, for message headers.
void put_u64(std::string& out, std::uint64_t v);
std::uint64_t get_u64(const std::string& in, std::size_t& pos);

}  // namespace scin::wire
