#include <loom/version.hpp>

namespace loom {

const char* library_version() { return version_string; }

} // namespace loom
