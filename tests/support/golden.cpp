#include "tests/support/golden.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace loom::test {

namespace {
std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}
} // namespace

void expect_matches_golden(const std::string& name, const std::string& text,
                           const std::string& extension) {
    std::string path = std::string(LOOM_SOURCE_DIR) + "/tests/golden/expected/" + name + extension;
    const char* update = std::getenv("UPDATE_GOLDEN");
    if (update && std::string(update) == "1") {
        std::ofstream(path) << text;
        return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "golden file " << path
                           << " is missing; run the tests with UPDATE_GOLDEN=1 to create it";
    std::stringstream buf;
    buf << in.rdbuf();
    std::string expected = buf.str();
    if (expected == text) return;
    auto a = lines_of(expected), b = lines_of(text);
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    ADD_FAILURE() << "generated source differs from " << path << " at line " << i + 1 << ":\n"
                  << "  expected: " << (i < a.size() ? a[i] : "<end of file>") << "\n"
                  << "  actual:   " << (i < b.size() ? b[i] : "<end of file>") << "\n"
                  << "If the change is intended, rerun with UPDATE_GOLDEN=1 and review the diff.\n"
                  << "Full generated source:\n" << text;
}

} // namespace loom::test
