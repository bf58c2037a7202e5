// An executable shell script in a fresh temporary directory, removed with it: a stand-in for an
// external program (clang-format) that fails, hangs or echoes its input.
#pragma once

#include <stdlib.h> // mkdtemp

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace loom::test {

class TempScript {
public:
    /// `body`: the lines after "#!/bin/sh".
    explicit TempScript(const std::string& body) {
        namespace fs = std::filesystem;
        std::string pattern = (fs::temp_directory_path() / "loom_script_XXXXXX").string();
        if (::mkdtemp(pattern.data())) dir_ = pattern;
        path_ = dir_ + "/fake-program";
        std::ofstream(path_) << "#!/bin/sh\n" << body << "\n";
        fs::permissions(path_, fs::perms::owner_all);
    }
    ~TempScript() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    TempScript(const TempScript&) = delete;
    TempScript& operator=(const TempScript&) = delete;

    const std::string& path() const { return path_; }

private:
    std::string dir_, path_;
};

} // namespace loom::test
