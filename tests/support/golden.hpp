// Golden files: generated source compared with tests/golden/expected/<name>.cu (CUDA) or
// <name>.cpp (C++ for the CPU target) on every run. UPDATE_GOLDEN=1 rewrites them instead; review
// the diff before committing.
#pragma once

#include <string>

namespace loom::test {

/// Fails the test with the first differing line if `text` differs from the golden file
/// `name` + `extension`.
void expect_matches_golden(const std::string& name, const std::string& text,
                           const std::string& extension = ".cu");

} // namespace loom::test
