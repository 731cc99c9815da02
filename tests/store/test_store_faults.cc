// Fault injection for the experiment database (issue 13): a disk that fills up
// and I/O errors on write and on fsync, injected through an SQLite VFS shim
// registered as the default VFS (the store opens files through it) and through
// PRAGMA max_page_count. Each case proves that the error is a clear scin::Error
// naming the file and the cause, that every point committed before the fault is
// still there after reopening, and that PRAGMA integrity_check is "ok".
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <atomic>
#include <cstring>

#include "base/error.h"
#include "store/store.h"
#include "store_test_util.h"

using namespace scin;

namespace {

// ---- the VFS shim: delegates everything to the real default VFS, except that
// xWrite / xSync return the armed error code.
std::atomic<int> g_write_rc{0};
std::atomic<int> g_sync_rc{0};
sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_shim;
sqlite3_io_methods g_methods;

struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;
};
sqlite3_file* real_of(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->real; }

int x_close(sqlite3_file* f) { return real_of(f)->pMethods->xClose(real_of(f)); }
int x_read(sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return real_of(f)->pMethods->xRead(real_of(f), b, n, o); }
int x_write(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
  if (int rc = g_write_rc.load()) return rc;
  return real_of(f)->pMethods->xWrite(real_of(f), b, n, o);
}
int x_truncate(sqlite3_file* f, sqlite3_int64 s) { return real_of(f)->pMethods->xTruncate(real_of(f), s); }
int x_sync(sqlite3_file* f, int flags) {
  if (int rc = g_sync_rc.load()) return rc;
  return real_of(f)->pMethods->xSync(real_of(f), flags);
}
int x_size(sqlite3_file* f, sqlite3_int64* s) { return real_of(f)->pMethods->xFileSize(real_of(f), s); }
int x_lock(sqlite3_file* f, int l) { return real_of(f)->pMethods->xLock(real_of(f), l); }
int x_unlock(sqlite3_file* f, int l) { return real_of(f)->pMethods->xUnlock(real_of(f), l); }
int x_reserved(sqlite3_file* f, int* r) { return real_of(f)->pMethods->xCheckReservedLock(real_of(f), r); }
int x_fcntl(sqlite3_file* f, int op, void* a) { return real_of(f)->pMethods->xFileControl(real_of(f), op, a); }
int x_sector(sqlite3_file* f) { return real_of(f)->pMethods->xSectorSize(real_of(f)); }
int x_devchar(sqlite3_file* f) { return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f)); }
int x_shm_map(sqlite3_file* f, int i, int sz, int ext, void volatile** p) {
  return real_of(f)->pMethods->xShmMap(real_of(f), i, sz, ext, p);
}
int x_shm_lock(sqlite3_file* f, int o, int n, int fl) { return real_of(f)->pMethods->xShmLock(real_of(f), o, n, fl); }
void x_shm_barrier(sqlite3_file* f) { real_of(f)->pMethods->xShmBarrier(real_of(f)); }
int x_shm_unmap(sqlite3_file* f, int del) { return real_of(f)->pMethods->xShmUnmap(real_of(f), del); }
int x_fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real_of(f)->pMethods->xFetch(real_of(f), o, n, p); }
int x_unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) { return real_of(f)->pMethods->xUnfetch(real_of(f), o, p); }

int x_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
  auto* s = reinterpret_cast<ShimFile*>(f);
  s->real = reinterpret_cast<sqlite3_file*>(s + 1);
  int rc = g_real->xOpen(g_real, name, s->real, flags, out);
  f->pMethods = (rc == SQLITE_OK && s->real->pMethods) ? &g_methods : nullptr;
  return rc;
}

void install_shim() {
  if (g_real) return;
  g_real = sqlite3_vfs_find(nullptr);
  ASSERT_NE(g_real, nullptr);
  g_methods = sqlite3_io_methods{3, x_close, x_read, x_write, x_truncate, x_sync, x_size, x_lock, x_unlock,
                                 x_reserved, x_fcntl, x_sector, x_devchar, x_shm_map, x_shm_lock, x_shm_barrier,
                                 x_shm_unmap, x_fetch, x_unfetch};
  g_shim = *g_real;
  g_shim.zName = "scin-faults";
  g_shim.pNext = nullptr;
  g_shim.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
  g_shim.xOpen = x_open;
  ASSERT_EQ(sqlite3_vfs_register(&g_shim, 1), SQLITE_OK);   // the default: Store::open uses it
}

struct Disarm {
  ~Disarm() {
    g_write_rc = 0;
    g_sync_rc = 0;
  }
};

PointRecord point(std::uint64_t i) {
  PointRecord p;
  p.index = i;
  p.axes = {{"collective.bytes", 1024 * (i + 1)}};
  p.algorithm = "ring";
  p.dtype = "bf16";
  p.bytes = 1024 * (i + 1);
  p.gpus = 8;
  p.engine = "analytic";
  p.time_us = 10.0 + static_cast<double>(i);
  p.message = std::string(200, 'x');   // a few KiB per batch: enough pages to hit the limits
  return p;
}

std::vector<PointRecord> batch(std::uint64_t first, std::uint64_t n) {
  std::vector<PointRecord> out;
  for (std::uint64_t i = first; i < first + n; ++i) out.push_back(point(i));
  return out;
}

RunStart start() {
  RunStart rs;
  rs.experiment = "faults";
  rs.name = "faults";
  rs.spec = {{"name", "faults"}};
  rs.points_total = 1000;
  return rs;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Commits 20 points, arms the fault, tries a 500-point batch, disarms, reopens:
// returns the points stored for the run after reopening.
struct Outcome {
  std::string error;
  std::vector<PointRecord> points;
  std::string integrity;
};

Outcome run_with_fault(const std::filesystem::path& db, const std::function<void(Store&)>& arm) {
  Outcome o;
  std::int64_t id = 0;
  {
    Disarm disarm;
    Store s = Store::open(db);
    id = s.begin_run(start());
    s.append_points(id, batch(0, 20));
    arm(s);
    o.error = error_of([&] { s.append_points(id, batch(20, 500)); });
  }
  Store s = Store::open(db);
  o.points = s.points(id);
  o.integrity = s.integrity_check();
  return o;
}

void expect_committed_kept(const Outcome& o, bool failed_batch_may_be_durable) {
  ASSERT_GE(o.points.size(), 20u);
  for (std::uint64_t i = 0; i < 20; ++i) {
    EXPECT_EQ(o.points[i].index, i);
    EXPECT_DOUBLE_EQ(o.points[i].time_us, 10.0 + static_cast<double>(i));
  }
  if (failed_batch_may_be_durable)
    EXPECT_TRUE(o.points.size() == 20u || o.points.size() == 520u) << o.points.size();   // all or nothing
  else
    EXPECT_EQ(o.points.size(), 20u);
  EXPECT_EQ(o.integrity, "ok");
}

}  // namespace

namespace {
// One fault: the error names the file and `cause`, and the committed points survive.
void check_fault(const char* file, const std::function<void(Store&)>& arm, const char* cause,
                 bool failed_batch_may_be_durable = false) {
  install_shim();
  test::TempDir dir;
  const auto db = dir / file;
  Outcome o = run_with_fault(db, arm);
  EXPECT_NE(o.error.find(db.string()), std::string::npos) << o.error;
  EXPECT_NE(o.error.find(cause), std::string::npos) << o.error;
  expect_committed_kept(o, failed_batch_may_be_durable);
}
}  // namespace

TEST(StoreFaults, DiskFullViaMaxPageCountIsAClearErrorAndLosesNothing) {
  check_fault("full.scindb", [](Store& s) {
    sqlite3_exec(s.raw(), "PRAGMA max_page_count = 1", nullptr, nullptr, nullptr);   // clamps to the current size
  }, "database or disk is full");
}

TEST(StoreFaults, DiskFullOnWriteIsAClearErrorAndLosesNothing) {
  check_fault("enospc.scindb", [](Store&) { g_write_rc = SQLITE_FULL; }, "database or disk is full");
}

TEST(StoreFaults, IoErrorOnWriteIsAClearErrorAndLosesNothing) {
  check_fault("eio.scindb", [](Store&) { g_write_rc = SQLITE_IOERR_WRITE; }, "disk I/O error");
}

TEST(StoreFaults, IoErrorOnFsyncIsAClearErrorAndLosesNothing) {
  // The WAL frames were written before the failed fsync: the batch may survive
  // whole, but never in part, and nothing committed before is lost.
  check_fault("fsync.scindb", [](Store&) { g_sync_rc = SQLITE_IOERR_FSYNC; }, "disk I/O error", true);
}

TEST(StoreFaults, ShimPassesThroughWhenDisarmed) {
  install_shim();
  test::TempDir dir;
  Outcome o = run_with_fault(dir / "ok.scindb", [](Store&) {});
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(o.points.size(), 520u);
  EXPECT_EQ(o.integrity, "ok");
}
