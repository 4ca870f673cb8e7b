#pragma once
// Build identity, recorded in --version, in every report and in every artifact's provenance.

namespace lite {
const char* version();     // semantic version of lite, e.g. "0.1.0"
const char* git_commit();  // short commit of the checkout it was built from, or "unknown"
const char* build_type();  // CMake build type, e.g. "Release"
const char* compiler();    // e.g. "GNU 12.2.0"
}  // namespace lite
