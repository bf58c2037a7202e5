// loom's device-side helpers (templates/**/*.cuh), embedded into the library at build time by
// cmake/embed_templates.cmake. nvrtc_compile passes them to NVRTC as named headers, so generated
// code can #include "loom/math.cuh" on a machine without loom's source tree.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace loom {

/// (name, contents) of every template, sorted by name; names are relative to templates/, e.g.
/// "loom/math.cuh".
const std::vector<std::pair<std::string, std::string>>& embedded_templates();

} // namespace loom
