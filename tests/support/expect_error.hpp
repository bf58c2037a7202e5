// Error tests check the exception type and the message text.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

/// Runs `statement`, expects it to throw exactly `Type` (or a subclass), and expects the message
/// to contain every string in the braced list `fragments`.
#define LOOM_EXPECT_ERROR(statement, Type, ...)                                                    \
    do {                                                                                           \
        bool loom_thrown_ = false;                                                                 \
        try {                                                                                      \
            statement;                                                                             \
        } catch (const Type& e) {                                                                  \
            loom_thrown_ = true;                                                                   \
            std::string msg = e.what();                                                            \
            for (const std::string& frag : std::vector<std::string> __VA_ARGS__)                   \
                EXPECT_NE(msg.find(frag), std::string::npos)                                       \
                    << "message lacks \"" << frag << "\"; the message was:\n" << msg;              \
        } catch (const std::exception& e) {                                                        \
            loom_thrown_ = true;                                                                   \
            ADD_FAILURE() << "expected " #Type ", got another exception: " << e.what();            \
        }                                                                                          \
        if (!loom_thrown_) ADD_FAILURE() << "expected " #Type " from: " #statement;                \
    } while (0)
