// An executable shell script in a fresh temporary directory, removed with it: a stand-in for an
// external program (clang-format) that fails, hangs or echoes its input.
#pragma once

#include "tests/support/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <string>

namespace loom::test {

class TempScript {
public:
    /// `body`: the lines after "#!/bin/sh".
    explicit TempScript(const std::string& body)
        : dir_("loom_script"), path_(dir_ / "fake-program") {
        std::ofstream(path_) << "#!/bin/sh\n" << body << "\n";
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all);
    }

    const std::string& path() const { return path_; }

private:
    TempDir dir_;
    std::string path_;
};

} // namespace loom::test
