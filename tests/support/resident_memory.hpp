// The process's resident host memory, for the leak tests: a leak of a few kB per kernel or launch
// grows it linearly over thousands of cycles, while the allocator's reuse keeps a leak-free loop
// flat once it is warm.
#pragma once

#include <cstdint>
#include <fstream>
#include <unistd.h>

namespace loom::test {

/// Resident set size in bytes (from /proc/self/statm); 0 where that file does not exist.
inline std::int64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::int64_t total_pages = 0, resident_pages = 0;
    if (!(statm >> total_pages >> resident_pages)) return 0;
    return resident_pages * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

/// Whether the binary is built with a sanitizer whose allocator keeps freed memory in quarantine
/// (resident memory is then no measure of leaks: LeakSanitizer checks those builds instead).
constexpr bool sanitizer_allocator() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#else
    return false;
#endif
}

} // namespace loom::test
