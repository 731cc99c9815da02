#pragma once

namespace scin {
/// The tool's version ("0.1.0") and the git revision it was built from.
const char* version();
const char* git_revision();
}  // namespace scin
