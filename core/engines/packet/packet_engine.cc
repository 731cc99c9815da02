// The packet engine's entry points; the engine itself is in engine.h and the
// components next to it.
#include "engines/packet/packet_engine.h"

#include "engines/packet/engine.h"

namespace scin {
namespace packet {

Run run(const Config& cfg, const Schedule& s) {
  Engine e(cfg, s);
  return e.run();
}

}  // namespace packet

SimResult run_packet_sim(const Config& cfg, const Schedule& s) { return packet::run(cfg, s).result; }

}  // namespace scin
