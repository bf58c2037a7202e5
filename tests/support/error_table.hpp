// A table of bad inputs: each row provokes one error and says what must come of it, the exception
// type (or a warning on stderr) and fragments its message must contain. A parameterized test runs
// every row as its own test case (tests/error/test_error_table.cpp, tests/gpu/...).
#pragma once

#include <loom/errors.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

namespace loom::test {

/// What a row must produce: one of loom's exception types, or no exception and a warning on
/// stderr (bad settings that loom survives, such as an unusable cache directory).
enum class Expect { User, Compile, Cuda, Internal, Warning };

inline const char* expect_name(Expect e) {
    switch (e) {
    case Expect::User:
        return "loom::UserError";
    case Expect::Compile:
        return "loom::CompileError";
    case Expect::Cuda:
        return "loom::CudaError";
    case Expect::Internal:
        return "loom::InternalError";
    case Expect::Warning:
        return "a warning on stderr and no exception";
    }
    return "?";
}

struct ErrorRow {
    std::string name;              ///< the test case's name: [a-z0-9_]
    std::function<void()> provoke; ///< runs the bad input
    Expect expect = Expect::User;
    std::vector<std::string> fragments; ///< every one must appear in the message

    friend std::ostream& operator<<(std::ostream& os, const ErrorRow& r) { return os << r.name; }
};

inline bool is_expected_type(const Error& e, Expect x) {
    switch (x) {
    case Expect::User:
        return dynamic_cast<const UserError*>(&e) != nullptr;
    case Expect::Compile:
        return dynamic_cast<const CompileError*>(&e) != nullptr;
    case Expect::Cuda:
        return dynamic_cast<const CudaError*>(&e) != nullptr;
    case Expect::Internal:
        return dynamic_cast<const InternalError*>(&e) != nullptr;
    case Expect::Warning:
        return false;
    }
    return false;
}

inline void expect_fragments(const ErrorRow& row, const std::string& message) {
    for (const std::string& f : row.fragments)
        EXPECT_NE(message.find(f), std::string::npos)
            << "the message lacks \"" << f << "\"; the message was:\n"
            << message;
}

/// Runs the row and checks its outcome.
inline void check_row(const ErrorRow& row) {
    ASSERT_FALSE(row.fragments.empty()) << "a row must name what its message says";
    if (row.expect == Expect::Warning) {
        ::testing::internal::CaptureStderr();
        std::string thrown;
        try {
            row.provoke();
        } catch (const std::exception& e) {
            thrown = e.what();
        }
        const std::string err = ::testing::internal::GetCapturedStderr();
        ASSERT_EQ(thrown, "") << "expected only a warning, but it threw";
        EXPECT_NE(err.find("loom: warning:"), std::string::npos) << "no warning; stderr:\n" << err;
        expect_fragments(row, err);
        return;
    }
    try {
        row.provoke();
    } catch (const Error& e) {
        EXPECT_TRUE(is_expected_type(e, row.expect))
            << "expected " << expect_name(row.expect) << ", got " << typeid(e).name() << ": "
            << e.what();
        expect_fragments(row, e.what());
        return;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected " << expect_name(row.expect) << ", got " << typeid(e).name()
                      << ", which is no loom::Error: " << e.what();
        return;
    }
    ADD_FAILURE() << "expected " << expect_name(row.expect) << ", but nothing was thrown";
}

/// gtest's name for a row.
inline std::string row_name(const ::testing::TestParamInfo<ErrorRow>& info) {
    return info.param.name;
}

} // namespace loom::test
