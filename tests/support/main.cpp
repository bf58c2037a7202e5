// The main of every test binary: GoogleTest's, plus a private scratch directory for the run.
// Each process gets a fresh directory under $TMPDIR (or /tmp) and points LOOM_CACHE_DIR and TMPDIR
// into it, so the suite never reads or writes the user's real cache (~/.cache/loom), never sees
// entries from an earlier run, and leaves nothing behind: the directory is removed when the
// tests end. LOOM_TEST_KEEP_SCRATCH=1 keeps it (its path is printed) for a post-mortem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

std::string make_scratch() {
    const char* t = std::getenv("TMPDIR");
    std::string pattern = std::string(t && *t ? t : "/tmp") + "/loom_tests_XXXXXX";
    if (!::mkdtemp(pattern.data())) {
        std::perror("loom tests: mkdtemp for the scratch directory");
        std::exit(2);
    }
    return pattern;
}

} // namespace

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    const std::string scratch = make_scratch();
    std::filesystem::create_directory(scratch + "/cache");
    std::filesystem::create_directory(scratch + "/tmp");
    setenv("LOOM_CACHE_DIR", (scratch + "/cache").c_str(), 1);
    setenv("TMPDIR", (scratch + "/tmp").c_str(), 1);

    int result = RUN_ALL_TESTS();

    const char* keep = std::getenv("LOOM_TEST_KEEP_SCRATCH");
    if (keep && std::string(keep) == "1") {
        std::printf("loom tests: scratch directory kept: %s\n", scratch.c_str());
    } else {
        std::error_code ec;
        std::filesystem::remove_all(scratch, ec);
    }
    return result;
}
