#include "fabric/config.h"

namespace scin {

const char* to_string(Topology t) {
  switch (t) {
    case Topology::Star: return "star";
    case Topology::Mesh: return "mesh";
    case Topology::TwoTier: return "two-tier";
  }
  return "?";
}
const char* to_string(Regulation r) { return r == Regulation::None ? "none" : "paced"; }
const char* to_string(ScaleFormat f) {
  switch (f) {
    case ScaleFormat::Fp16: return "fp16";
    case ScaleFormat::Bf16: return "bf16";
    case ScaleFormat::Fp32: return "fp32";
  }
  return "?";
}
const char* to_string(RingProtocol p) {
  switch (p) {
    case RingProtocol::Auto: return "auto";
    case RingProtocol::LL: return "LL";
    case RingProtocol::LL128: return "LL128";
    case RingProtocol::Simple: return "Simple";
  }
  return "?";
}
const char* to_string(Codec c) {
  switch (c) {
    case Codec::Int8: return "int8";
    case Codec::Int4: return "int4";
    case Codec::Fp8E4M3: return "fp8e4m3";
    case Codec::Fp8E5M2: return "fp8e5m2";
  }
  return "?";
}
const char* to_string(StoreMode m) {
  return m == StoreMode::CutThrough ? "cut-through" : "store-and-forward";
}

int scale_bytes(ScaleFormat f) { return f == ScaleFormat::Fp32 ? 4 : 2; }
int codec_bits(Codec c) { return c == Codec::Int4 ? 4 : 8; }

}  // namespace scin
