// Golden files: generated source compared with tests/golden/expected/<name>.cu on every run.
// UPDATE_GOLDEN=1 rewrites them instead; review the diff before committing.
#pragma once

#include <string>

namespace loom::test {

/// Fails the test with the first differing line if `text` differs from the golden file `name`.
void expect_matches_golden(const std::string& name, const std::string& text);

} // namespace loom::test
