// Running a program as a child process without a shell: the host compiler and clang-format.
// posix_spawn rather than fork: safe in threaded programs, and nothing is interpreted by a shell.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace loom {

struct ProcessOptions {
    std::string cwd;                  ///< the child's working directory; "" for ours
    std::optional<std::string> input; ///< written to the child's stdin; without it, /dev/null
    bool merge_stderr = true;         ///< stderr into `output` (interleaved), else into `errors`
    /// Milliseconds before the child (with its process group) is killed; 0 waits for ever.
    int timeout_ms = 0;
};

/// What became of a child process.
struct ProcessResult {
    int spawn_error = 0;    ///< errno of posix_spawnp (or of making its pipes); 0 when it started
    int status = 0;         ///< waitpid status
    bool timed_out = false; ///< killed after ProcessOptions::timeout_ms
    std::string output;     ///< stdout, and stderr when merged
    std::string errors;     ///< stderr when not merged

    bool exited_ok() const;
    /// The program could not be run: exec failed in posix_spawnp, or a wrapper (env, ccache)
    /// reported 126/127, the shell convention for "cannot execute" and "not found".
    bool not_runnable() const;
    /// "exit status 1", "killed by signal 9", ...
    std::string describe_status() const;
};

/// Runs argv (argv[0] searched on PATH unless it holds a '/') and waits for it. Never throws for
/// the child's sake: a program that cannot start sets spawn_error. stdin, stdout and stderr are
/// served together (poll), so a child that writes much before reading all its input cannot
/// deadlock against us.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

} // namespace loom
