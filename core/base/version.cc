#include "base/version.h"

namespace scin {
const char* version() { return SCIN_VERSION; }
const char* git_revision() { return SCIN_GIT_REV; }
}  // namespace scin
