#include "runtime/subprocess.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

extern char** environ;

namespace loom {

bool ProcessResult::exited_ok() const {
    return !spawn_error && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool ProcessResult::not_runnable() const {
    return spawn_error ||
           (WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127));
}

std::string ProcessResult::describe_status() const {
    if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
    return fmt::format("wait status {}", status);
}

namespace {

using Clock = std::chrono::steady_clock;

/// A file descriptor, closed when it goes out of scope.
struct Fd {
    int fd = -1;
    Fd() = default;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    explicit operator bool() const { return fd >= 0; }
};

/// Milliseconds left until `deadline` for poll (at least 0), or -1 without one.
int poll_timeout(const Clock::time_point* deadline) {
    if (!deadline) return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    return int(std::max<decltype(left)>(left, 0));
}

/// Serves the child's stdin, stdout and stderr until both outputs are closed or the deadline
/// passes (returns false then). Polling all three at once is what keeps a child that writes
/// before it has read everything from blocking on a full pipe while we block writing to it.
bool pump(Fd& in, const std::string& input, Fd& out, Fd& err, ProcessResult& r,
          const Clock::time_point* deadline) {
    std::size_t written = 0;
    if (input.empty()) in.reset();
    char buf[1 << 16];
    while (out || err) {
        Fd* const all[3] = {&in, &out, &err};
        const short events[3] = {POLLOUT, POLLIN, POLLIN};
        pollfd fds[3];
        Fd* owner[3];
        int n = 0;
        for (int i = 0; i < 3; ++i) {
            if (!*all[i]) continue;
            fds[n] = pollfd{all[i]->fd, events[i], 0};
            owner[n++] = all[i];
        }
        const int wait = poll_timeout(deadline);
        if (wait == 0) return false;
        int k = ::poll(fds, nfds_t(n), wait);
        if (k < 0 && errno != EINTR) return true; // cannot happen with valid descriptors
        for (int i = 0; k > 0 && i < n; ++i) {
            if (!fds[i].revents) continue;
            if (owner[i] == &in) {
                // MSG_NOSIGNAL: a child that quit early gives EPIPE, not a SIGPIPE for us.
                ssize_t w = ::send(in.fd, input.data() + written,
                                   std::min<std::size_t>(input.size() - written, sizeof buf),
                                   MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) written += std::size_t(w);
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size())
                    in.reset(); // EOF for the child
                continue;
            }
            ssize_t got = ::read(owner[i]->fd, buf, sizeof buf);
            if (got > 0)
                (owner[i] == &out ? r.output : r.errors).append(buf, std::size_t(got));
            else if (got == 0 || (errno != EINTR && errno != EAGAIN))
                owner[i]->reset();
        }
    }
    return true;
}

} // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
    ProcessResult r;
    // Our ends are close-on-exec: children that other threads start must not inherit them, or
    // they would hold our pipes open.
    Fd out_read, out_write, err_read, err_write, in_ours, in_child;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        r.spawn_error = errno;
        return r;
    }
    out_read.fd = fds[0];
    out_write.fd = fds[1];
    if (!options.merge_stderr) {
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            r.spawn_error = errno;
            return r;
        }
        err_read.fd = fds[0];
        err_write.fd = fds[1];
    }
    // stdin is a socket rather than a pipe for send(MSG_NOSIGNAL), see pump().
    if (options.input) {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
            r.spawn_error = errno;
            return r;
        }
        in_ours.fd = fds[0];
        in_child.fd = fds[1];
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (options.input)
        posix_spawn_file_actions_adddup2(&actions, in_child.fd, 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_write.fd, 1);
    posix_spawn_file_actions_adddup2(&actions, options.merge_stderr ? out_write.fd : err_write.fd,
                                     2);
    if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (options.timeout_ms > 0) {
        // Its own process group, so that a timeout kills what it started too (a wrapper script's
        // children would otherwise hold our pipes open).
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    r.spawn_error = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    out_write.reset();
    err_write.reset();
    in_child.reset();
    if (r.spawn_error) return r;

    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
    const Clock::time_point* limit = options.timeout_ms > 0 ? &deadline : nullptr;
    static const std::string no_input;
    r.timed_out =
        !pump(in_ours, options.input ? *options.input : no_input, out_read, err_read, r, limit);
    in_ours.reset();
    out_read.reset();
    err_read.reset();
    // The outputs are closed; a child may still linger (a daemonized grandchild holds nothing of
    // ours by now), so a deadline still applies to the wait.
    while (limit && !r.timed_out) {
        pid_t w = ::waitpid(pid, &r.status, WNOHANG);
        if (w == pid) return r;
        if (w < 0 && errno != EINTR) return r;
        if (Clock::now() >= deadline)
            r.timed_out = true;
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (r.timed_out) ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
    }
    return r;
}

} // namespace loom
