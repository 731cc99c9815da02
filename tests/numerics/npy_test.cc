// .npy reader and writer: good files in every accepted dtype, malformed files rejected clearly.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "numerics/formats.h"
#include "numerics/inputs.h"

using namespace scin;
namespace fs = std::filesystem;

namespace {

std::string tmp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("scin_npy_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A .npy file with a custom header dictionary and payload.
std::string npy_bytes(const std::string& dict, const std::string& payload, int major = 1) {
  std::string header = dict;
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  if (major != 1) out += std::string(2, '\0');
  return out + header + payload;
}

std::string floats_payload(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

void expect_error(const std::string& path, const std::string& fragment) {
  try {
    read_npy(path);
    FAIL() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << "message names the file: " << e.what();
  }
}

}  // namespace

TEST(Npy, RoundTripsEveryWrittenDtype) {
  const std::vector<float> v = {1.0f, -2.5f, 3.140625f, 1e-3f, 65504.0f, -0.0f};
  for (const std::string d : {"<f4", "<f2", "<u2"}) {
    const std::string p = tmp_path("rt" + d.substr(1) + ".npy");
    write_npy(p, v, d);
    NpyArray a = read_npy(p);
    EXPECT_EQ(a.descr, d);
    ASSERT_EQ(a.shape, std::vector<std::uint64_t>{6});
    ASSERT_EQ(a.data.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const float want = d == "<f4" ? v[i] : d == "<f2" ? num::round_fp16(v[i]) : num::round_bf16(v[i]);
      EXPECT_EQ(a.data[i], want) << d << " " << i;
    }
  }
}

TEST(Npy, ReadsVersion2MultiDimAndFloat64) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const std::string p = tmp_path("v2.npy");
  write_raw(p, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats_payload(v), 2));
  NpyArray a = read_npy(p);
  EXPECT_EQ(a.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(a.data, v);
  const std::vector<double> d = {0.5, -1.25};
  const std::string p8 = tmp_path("f8.npy");
  write_raw(p8, npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                          std::string(reinterpret_cast<const char*>(d.data()), 16)));
  EXPECT_EQ(read_npy(p8).data, (std::vector<float>{0.5f, -1.25f}));
  // ml_dtypes bfloat16 is stored as 2-byte void.
  const std::string pv = tmp_path("v2b.npy");
  const std::string bf = {'\x80', '\x3f', '\x00', '\xc0'};   // 1.0, -2.0
  write_raw(pv, npy_bytes("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", bf));
  EXPECT_EQ(read_npy(pv).data, (std::vector<float>{1.0f, -2.0f}));
}

TEST(Npy, RejectsMalformedFiles) {
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  const std::string payload = floats_payload({1, 2, 3, 4});
  std::string p;

  p = tmp_path("missing.npy");
  fs::remove(p);
  expect_error(p, "cannot open");

  p = tmp_path("magic.npy");
  write_raw(p, "NUMPY\x01\x00 not a numpy file at all");
  expect_error(p, "bad magic");

  p = tmp_path("short.npy");
  write_raw(p, "\x93NUM");
  expect_error(p, "bad magic");

  p = tmp_path("version.npy");
  write_raw(p, npy_bytes(good_dict, payload, 9));
  expect_error(p, "version 9");

  p = tmp_path("hdrtrunc.npy");
  write_raw(p, npy_bytes(good_dict, payload).substr(0, 30));
  expect_error(p, "header is truncated");

  p = tmp_path("nodict.npy");
  write_raw(p, npy_bytes("descr <f4 shape 4", payload));
  expect_error(p, "not a dictionary");

  p = tmp_path("nodescr.npy");
  write_raw(p, npy_bytes("{'fortran_order': False, 'shape': (4,), }", payload));
  expect_error(p, "'descr'");

  p = tmp_path("badshape.npy");
  write_raw(p, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4x,), }", payload));
  expect_error(p, "shape");

  p = tmp_path("int.npy");
  write_raw(p, npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", payload));
  expect_error(p, "dtype '<i4' is not supported");

  p = tmp_path("bigendian.npy");
  write_raw(p, npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", payload));
  expect_error(p, "big-endian");

  p = tmp_path("fortran.npy");
  write_raw(p, npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", payload));
  expect_error(p, "Fortran");

  p = tmp_path("truncated.npy");
  write_raw(p, npy_bytes(good_dict, payload.substr(0, 10)));
  expect_error(p, "truncated");

  p = tmp_path("huge.npy");
  write_raw(p, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }", payload));
  expect_error(p, "at most");
  write_raw(p, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 1000), }", payload));
  expect_error(p, "truncated");

  p = tmp_path("nan.npy");
  write_raw(p, npy_bytes(good_dict, floats_payload({1, NAN, 3, 4})));
  expect_error(p, "not finite");
}

TEST(Npy, SplitsOneFileOrTakesOnePerRank) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const std::string one = tmp_path("split.npy");
  write_npy(one, v, "<f4", {4, 3});
  auto parts = load_npy_inputs({one}, 4);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[2], (std::vector<float>{6, 7, 8}));
  EXPECT_THROW(load_npy_inputs({one}, 5), Error);   // 12 does not split 5 ways

  const std::string a = tmp_path("ra.npy"), b = tmp_path("rb.npy"), c = tmp_path("rc.npy");
  write_npy(a, {1, 2}, "<f2");
  write_npy(b, {3, 4}, "<u2");
  write_npy(c, {5, 6, 7});
  auto per = load_npy_inputs({a, b}, 2);
  EXPECT_EQ(per[1], (std::vector<float>{3, 4}));
  EXPECT_THROW(load_npy_inputs({a, c}, 2), Error);      // different sizes
  EXPECT_THROW(load_npy_inputs({a, b, c}, 2), Error);   // wrong file count
}
