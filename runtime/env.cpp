#include "runtime/env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace loom::env {

namespace {

std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::string trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

/// A bad value is reported once per variable: the setting is read on every lookup.
void warn_once(const char* name, const std::string& message) {
    static std::mutex mutex;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(name).second) std::fprintf(stderr, "%s\n", message.c_str());
}

} // namespace

std::optional<std::string> get(const char* name) {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
}

std::string value(const char* name) { return get(name).value_or(""); }

bool flag(const char* name, bool fallback) {
    const std::string v = lowercase(trimmed(value(name)));
    if (v.empty()) return fallback;
    if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
    if (v == "0" || v == "off" || v == "false" || v == "no") return false;
    warn_once(name, fmt::format("loom: warning: {} is '{}', but it must be 1/on/true/yes or "
                                "0/off/false/no; using the default ({}). Set it to one of those "
                                "or unset it.",
                                name, value(name), fallback ? "on" : "off"));
    return fallback;
}

std::uint64_t unsigned_number(const char* name, std::uint64_t fallback, std::string_view what) {
    const std::string v = trimmed(value(name));
    if (v.empty()) return fallback;
    bool digits = v.size() <= 19 && std::all_of(v.begin(), v.end(), [](unsigned char c) {
                      return std::isdigit(c) != 0;
                  });
    if (digits) return std::stoull(v);
    warn_once(name, fmt::format("loom: warning: {} is '{}', but it must be a whole number ({}); "
                                "using the default {}. Set it to a number or unset it.",
                                name, value(name), what, fallback));
    return fallback;
}

bool debug_enabled(std::string_view topic) {
    const std::string list = value("LOOM_DEBUG");
    std::string_view rest = list;
    bool enabled = false;
    while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        std::string item = lowercase(trimmed(rest.substr(0, comma)));
        if (item == topic || item == "all") enabled = true;
        // A misspelt topic would otherwise print nothing, as if the code never ran.
        if (!item.empty() && item != "all" && item != "passes" && item != "cache")
            warn_once("LOOM_DEBUG", fmt::format("loom: warning: LOOM_DEBUG is '{}', which names "
                                                "the unknown topic '{}'; the topics are passes, "
                                                "cache and all (a comma list).",
                                                list, item));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return enabled;
}

} // namespace loom::env
