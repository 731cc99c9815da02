// The .npy reader and writer, and per-rank inputs read from .npy files (inputs.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_input.h"
#include "numerics/formats.h"
#include "numerics/inputs.h"

namespace scin {

// ---------------------------------------------------------------- .npy

namespace {

// The .npy header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// It is rewritten to JSON (quotes, tuples, booleans, trailing commas) and read by
// the one JSON reader, so its nesting and values are checked like any document.
nlohmann::json header_as_json(const std::string& header, const std::string& path) {
  std::string j;
  j.reserve(header.size() + 16);
  for (std::size_t i = 0; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '\'' || c == '"') {   // a Python string literal
      std::size_t end = header.find(c, i + 1);
      if (end == std::string::npos) throw Error(fmt::format("{}: .npy header has an unterminated string", path));
      j += '"';
      for (std::size_t k = i + 1; k < end; ++k) {
        if (header[k] == '"' || header[k] == '\\') j += '\\';
        j += header[k];
      }
      j += '"';
      i = end;
    } else if (c == '(') {
      j += '[';
    } else if (c == ')' || c == ']' || c == '}') {
      while (!j.empty() && (j.back() == ' ' || j.back() == ',')) j.pop_back();   // trailing comma
      j += c == ')' ? ']' : c;
    } else if (header.compare(i, 4, "True") == 0) {
      j += "true";
      i += 3;
    } else if (header.compare(i, 5, "False") == 0) {
      j += "false";
      i += 4;
    } else if (header.compare(i, 4, "None") == 0) {
      j += "null";
      i += 3;
    } else {
      j += c;
    }
  }
  nlohmann::json h = parse_json_text(j, path + ": .npy header", {false, 8, {}});
  if (!h.is_object()) throw Error(fmt::format("{}: .npy header is not a dictionary", path));
  return h;
}

const nlohmann::json& header_entry(const nlohmann::json& h, const char* key, const std::string& path) {
  auto it = h.find(key);
  if (it == h.end()) throw Error(fmt::format("{}: .npy header has no '{}' entry", path, key));
  return *it;
}

}  // namespace

NpyArray read_npy(const std::string& path, std::uint64_t max_elements) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open .npy file", path));
  unsigned char pre[10];
  in.read(reinterpret_cast<char*>(pre), 8);
  if (in.gcount() != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    throw Error(fmt::format("{}: not a .npy file (bad magic; expected \\x93NUMPY)", path));
  const int major = pre[6];
  std::uint64_t hlen = 0;
  if (major == 1) {
    in.read(reinterpret_cast<char*>(pre), 2);
    if (in.gcount() != 2) throw Error(fmt::format("{}: .npy header is truncated", path));
    hlen = pre[0] | (static_cast<std::uint64_t>(pre[1]) << 8);
  } else if (major == 2 || major == 3) {
    in.read(reinterpret_cast<char*>(pre), 4);
    if (in.gcount() != 4) throw Error(fmt::format("{}: .npy header is truncated", path));
    hlen = pre[0] | (static_cast<std::uint64_t>(pre[1]) << 8) | (static_cast<std::uint64_t>(pre[2]) << 16) |
           (static_cast<std::uint64_t>(pre[3]) << 24);
  } else {
    throw Error(fmt::format("{}: .npy format version {} is not supported (1, 2 or 3)", path, major));
  }
  if (hlen > (1u << 20)) throw Error(fmt::format("{}: .npy header length {} is implausible", path, hlen));
  std::string header(hlen, '\0');
  in.read(header.data(), static_cast<std::streamsize>(hlen));
  if (static_cast<std::uint64_t>(in.gcount()) != hlen) throw Error(fmt::format("{}: .npy header is truncated", path));
  if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
    throw Error(fmt::format("{}: .npy header is not a dictionary", path));

  NpyArray a;
  const nlohmann::json h = header_as_json(header, path);
  a.descr = json_string(header_entry(h, "descr", path), path + ": .npy descr");
  if (json_bool(header_entry(h, "fortran_order", path), path + ": .npy fortran_order"))
    throw Error(fmt::format("{}: Fortran-order arrays are not supported; save in C order", path));
  const nlohmann::json& dims = header_entry(h, "shape", path);
  if (!dims.is_array()) throw Error(fmt::format("{}: .npy shape must be a tuple of integers", path));
  std::uint64_t count = 1;
  std::string shape;
  for (const auto& d : dims) {
    const std::uint64_t n = json_uint(d, path + ": .npy shape", 0, 1ull << 40);
    a.shape.push_back(n);
    shape += (shape.empty() ? "" : ", ") + std::to_string(n);
    if (n != 0 && count > (1ull << 40) / n) throw Error(fmt::format("{}: .npy shape ({}) is too large", path, shape));
    count *= n;
  }
  if (count > max_elements)
    throw Error(fmt::format("{}: shape ({}) holds {} elements; at most {} are accepted", path, shape, count,
                            max_elements));
  int elem_bytes;
  std::string kind = a.descr;
  if (kind.size() == 3 && (kind[0] == '>' )) {
    throw Error(fmt::format("{}: big-endian dtype '{}' is not supported; use little-endian", path, a.descr));
  }
  if (kind.size() == 3 && (kind[0] == '<' || kind[0] == '|' || kind[0] == '=')) kind = kind.substr(1);
  if (kind == "f2" || kind == "u2" || kind == "V2") elem_bytes = 2;
  else if (kind == "f4") elem_bytes = 4;
  else if (kind == "f8") elem_bytes = 8;
  else
    throw Error(fmt::format("{}: dtype '{}' is not supported; use float16 '<f2', float32 '<f4', float64 '<f8' or "
                            "bfloat16 as uint16 '<u2'", path, a.descr));
  const std::uint64_t need = count * static_cast<std::uint64_t>(elem_bytes);
  const auto data_pos = in.tellg();
  in.seekg(0, std::ios::end);
  const auto avail = static_cast<std::uint64_t>(in.tellg() - data_pos);
  in.seekg(data_pos);
  if (avail < need)
    throw Error(fmt::format("{}: data is truncated: shape ({}) of '{}' needs {} bytes, file has {}", path, shape,
                            a.descr, need, avail));
  std::vector<unsigned char> raw(need);
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (static_cast<std::uint64_t>(in.gcount()) != raw.size())
    throw Error(fmt::format("{}: data is truncated", path));
  a.data.resize(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const unsigned char* p = raw.data() + i * static_cast<std::uint64_t>(elem_bytes);
    float v;
    if (elem_bytes == 2) {
      const auto bits = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
      v = kind == "f2" ? num::fp16_to_float(bits) : num::bf16_to_float(bits);
    } else if (elem_bytes == 4) {
      std::memcpy(&v, p, 4);
    } else {
      double d;
      std::memcpy(&d, p, 8);
      v = static_cast<float>(d);
    }
    if (!std::isfinite(v)) {
      if (elem_bytes == 8) {
        double d;
        std::memcpy(&d, p, 8);
        if (std::isfinite(d))
          throw Error(fmt::format("{}: element {} = {:g} overflows float32 (largest finite {:g})", path, i, d,
                                  std::numeric_limits<float>::max()));
      }
      throw Error(fmt::format("{}: element {} is not finite ({})", path, i, v));
    }
    a.data[i] = v;
  }
  return a;
}

void write_npy(const std::string& path, const std::vector<float>& data, const std::string& descr,
               const std::vector<std::uint64_t>& shape) {
  if (descr != "<f4" && descr != "<f2" && descr != "<u2")
    throw Error(fmt::format("write_npy: descr '{}' is not one of <f4, <f2, <u2", descr));
  std::string shp;
  if (shape.empty()) {
    shp = fmt::format("({},)", data.size());
  } else {
    shp = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) shp += fmt::format("{}{}", i ? ", " : "", shape[i]);
    shp += shape.size() == 1 ? ",)" : ")";
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shp);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(fmt::format("{}: cannot write .npy file", path));
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (float v : data) {
    if (descr == "<f4") {
      out.write(reinterpret_cast<const char*>(&v), 4);
    } else {
      const std::uint16_t b = descr == "<f2" ? num::fp16_bits(v) : num::bf16_bits(v);
      const char c[2] = {static_cast<char>(b & 0xff), static_cast<char>(b >> 8)};
      out.write(c, 2);
    }
  }
  if (!out) throw Error(fmt::format("{}: write failed", path));
}
std::vector<std::vector<float>> load_npy_inputs(const std::vector<std::string>& files, int ranks) {
  if (files.empty()) throw Error("--npy: no files given");
  std::vector<std::vector<float>> out;
  if (files.size() == 1) {
    NpyArray a = read_npy(files[0], kMaxQuantElemsTotal);
    const std::uint64_t n = a.data.size();
    if (n == 0 || n % static_cast<std::uint64_t>(ranks) != 0)
      throw Error(fmt::format("--npy: {} holds {} elements, not a positive multiple of the {} ranks it is split across",
                              files[0], n, ranks));
    const std::uint64_t per = n / static_cast<std::uint64_t>(ranks);
    for (int r = 0; r < ranks; ++r) {
      auto first = a.data.begin() + static_cast<std::ptrdiff_t>(per * static_cast<std::uint64_t>(r));
      out.emplace_back(first, first + static_cast<std::ptrdiff_t>(per));
    }
    return out;
  }
  if (files.size() != static_cast<std::size_t>(ranks))
    throw Error(fmt::format("--npy: give one file per rank ({}) or one file to split; got {}", ranks, files.size()));
  for (const auto& f : files) {
    NpyArray a = read_npy(f, kMaxQuantElemsPerRank);
    if (a.data.empty()) throw Error(fmt::format("--npy: {} holds no elements", f));
    if (!out.empty() && a.data.size() != out.front().size())
      throw Error(fmt::format("--npy: {} holds {} elements but {} holds {}; every rank needs the same count", f,
                              a.data.size(), files.front(), out.front().size()));
    out.push_back(std::move(a.data));
  }
  return out;
}

}  // namespace scin
