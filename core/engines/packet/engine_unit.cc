// The engine's parts compiled as one translation unit: the event loop calls
// from the sender into the ISA, the switch and back on every packet, and those
// calls inline only within one unit. (core/CMakeLists.txt lists this file, not
// the parts.)
#include "engines/packet/engine.cc"
#include "engines/packet/setup.cc"
#include "engines/packet/reads.cc"
#include "engines/packet/sender.cc"
#include "engines/packet/switch.cc"
#include "engines/packet/tiers.cc"
