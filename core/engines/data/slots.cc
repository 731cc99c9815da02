// Storage of short-lived regions: see slots.h.
#include "engines/data/slots.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "engines/data/buffers.h"

namespace scin {

namespace {

using data_internal::storage_bytes;

// One region of a buffer that may move to a slot: [offset, offset + count),
// alive from step `first` to step `last` (both inclusive).
struct Piece {
  BufferId buffer;
  std::uint64_t offset, count;
  std::size_t first, last;
  int slot = -1;
};

// The buffers' pieces as the running steps access them; a buffer that breaks
// a rule of slots.h is marked in `ok`.
class Pieces {
 public:
  Pieces(const Schedule& s, std::vector<char>& ok) : s_(s), ok_(ok), at_(s.buffers.size()) {}

  // Step i reads region r (`write` false) or writes it whole (`write` true).
  void access(std::size_t i, const Region& r, bool write) {
    const BufferId b = r.buffer;
    if (!ok_[b]) return;
    const BufferDecl& d = s_.buffers[b];
    if (r.count == 0 || (is_codec(d.format) && (d.block_elems < 1 || r.offset % static_cast<std::uint64_t>(d.block_elems) != 0))) {
      ok_[b] = 0;
      return;
    }
    auto [it, fresh] = at_[b].try_emplace(r.offset, pieces_.size());
    if (fresh) {
      if (!write) {   // read before anything wrote it: the fill value, kept in place
        at_[b].erase(it);
        ok_[b] = 0;
        return;
      }
      pieces_.push_back(Piece{b, r.offset, r.count, i, i});
      by_access_[{i, b, r.offset}] = it->second;
      return;
    }
    Piece& p = pieces_[it->second];
    if (p.count != r.count) {
      ok_[b] = 0;
      return;
    }
    if (write && p.last < i) {
      // Written whole again by a step that does not read it: the old values
      // are dead from here, the new ones a piece of their own.
      it->second = pieces_.size();
      pieces_.push_back(Piece{b, r.offset, r.count, i, i});
    } else {
      p.last = i;
    }
    by_access_[{i, b, r.offset}] = it->second;
  }

  // Marks buffers whose regions overlap without being equal.
  void check_disjoint() {
    for (std::size_t b = 0; b < at_.size(); ++b) {
      if (!ok_[b]) continue;
      std::uint64_t end = 0;
      for (const auto& [offset, k] : at_[b]) {
        if (offset < end) ok_[b] = 0;
        end = std::max(end, offset + pieces_[k].count);
      }
    }
  }

  std::vector<Piece>& pieces() { return pieces_; }
  // Index of the piece step i accesses in buffer b at `offset`.
  std::size_t index(std::size_t i, BufferId b, std::uint64_t offset) const { return by_access_.at({i, b, offset}); }

 private:
  const Schedule& s_;
  std::vector<char>& ok_;
  std::vector<std::map<std::uint64_t, std::size_t>> at_;   // per buffer: offset -> its latest piece
  std::map<std::tuple<std::size_t, BufferId, std::uint64_t>, std::size_t> by_access_;   // (step, buffer, offset) -> piece
  std::vector<Piece> pieces_;
};

// Whether step i of `steps` runs (as run_step decides).
bool runs(const Schedule& s, const std::vector<Step>& steps, std::size_t i) {
  const Step& listed = s.steps[i];
  if (listed.op == DataOp::None || listed.srcs.size() == 0 || listed.srcs.front().count == 0) return false;
  return steps[i].op != DataOp::None && steps[i].dsts.size() != 0;
}

}  // namespace

bool slot_storage(const Schedule& s, std::vector<Step>& steps, std::vector<BufferDecl>& decls,
                  const std::vector<int>* pinned, const std::vector<char>* unread_outputs) {
  const std::size_t nb = s.buffers.size();
  std::vector<char> ok(nb, 1);
  if (pinned)
    for (std::size_t b = 0; b < nb && b < pinned->size(); ++b)
      if ((*pinned)[b] >= 0) ok[b] = 0;
  for (BufferId b : s.input) ok[b] = 0;
  for (std::size_t r = 0; r < s.output.size(); ++r)
    if (r == 0 || !unread_outputs || r >= unread_outputs->size() || !(*unread_outputs)[r]) ok[s.output[r]] = 0;
  Pieces pc(s, ok);
  for (std::size_t i = 0; i < steps.size() && i < s.steps.size(); ++i) {
    if (!runs(s, steps, i)) continue;
    const Step& st = steps[i];
    // Reads first: a region a step both reads and writes is read first.
    for (const Region& r : st.srcs) pc.access(i, r, false);
    const bool reads_dst = st.op == DataOp::Reduce && st.accumulate;
    if (reads_dst)
      for (const Region& r : st.dsts) pc.access(i, r, false);
    for (const Region& r : st.dsts) pc.access(i, r, true);
  }
  pc.check_disjoint();
  std::vector<Piece>& pieces = pc.pieces();
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < pieces.size(); ++k)
    if (ok[pieces[k].buffer]) order.push_back(k);
  if (order.empty()) return false;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pieces[a].first < pieces[b].first; });

  // Slots by representation; each piece takes a free slot (its last piece
  // ended before this one starts), the smallest that holds it, else the
  // largest free one grown, else a new one.
  struct Slot {
    BufferDecl decl;
    std::size_t free_after;
  };
  std::vector<Slot> slots;
  using Key = std::tuple<int, int, int>;
  auto key_of = [](const BufferDecl& d) {
    return is_codec(d.format) ? Key{static_cast<int>(d.format), d.block_elems, static_cast<int>(d.scale_format)}
                              : Key{static_cast<int>(d.format), 0, 0};
  };
  for (std::size_t k : order) {
    Piece& p = pieces[k];
    const BufferDecl& d = s.buffers[p.buffer];
    int fit = -1, grow = -1;
    for (std::size_t j = 0; j < slots.size(); ++j) {
      Slot& sl = slots[j];
      if (sl.free_after >= p.first || key_of(sl.decl) != key_of(d)) continue;
      if (sl.decl.elems >= p.count) {
        if (fit < 0 || sl.decl.elems < slots[static_cast<std::size_t>(fit)].decl.elems) fit = static_cast<int>(j);
      } else if (grow < 0 || sl.decl.elems > slots[static_cast<std::size_t>(grow)].decl.elems) {
        grow = static_cast<int>(j);
      }
    }
    int j = fit >= 0 ? fit : grow;
    if (j < 0) {
      BufferDecl nd = d;
      nd.name = "slot";
      nd.elems = 0;
      slots.push_back(Slot{nd, 0});
      j = static_cast<int>(slots.size()) - 1;
    }
    Slot& sl = slots[static_cast<std::size_t>(j)];
    sl.decl.elems = std::max(sl.decl.elems, p.count);
    sl.free_after = p.last;
    p.slot = j;
  }
  std::uint64_t before = 0, after = 0;
  for (std::size_t b = 0; b < nb; ++b)
    if (ok[b]) before += storage_bytes(s.buffers[b]);
  for (const Slot& sl : slots) after += storage_bytes(sl.decl);
  if (after >= before) return false;

  decls = s.buffers;
  for (std::size_t b = 0; b < nb; ++b)
    if (ok[b]) decls[b].elems = 0;
  for (const Slot& sl : slots) decls.push_back(sl.decl);
  auto move = [&](std::size_t i, Region& r) {
    if (!ok[r.buffer]) return;
    const Piece& p = pieces[pc.index(i, r.buffer, r.offset)];
    r = Region{static_cast<BufferId>(nb + static_cast<std::size_t>(p.slot)), 0, r.count};
  };
  for (std::size_t i = 0; i < steps.size() && i < s.steps.size(); ++i) {
    if (!runs(s, steps, i)) continue;
    for (Region& r : steps[i].srcs) move(i, r);
    for (Region& r : steps[i].dsts) move(i, r);
  }
  return true;
}

std::uint64_t laid_bytes(const std::vector<BufferDecl>& decls, const std::vector<char>& touched,
                         const std::vector<char>* in_place) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < decls.size(); ++i)
    if (i < touched.size() && touched[i] && !(in_place && i < in_place->size() && (*in_place)[i]))
      n += storage_bytes(decls[i]);
  return n;
}

}  // namespace scin
