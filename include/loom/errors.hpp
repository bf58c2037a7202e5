// The error hierarchy shared by every layer of loom.
//
// Every message says what is wrong, where (kernel, field, layer, argument), what was expected,
// what was found, and how to fix it. Build messages with fmt only on the failure path.
#pragma once

#include <stdexcept>
#include <string>

namespace loom {

/// Base of every exception loom throws.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Bad DSL input, bad arguments or a bad launch configuration: the user can fix it.
class UserError : public Error {
public:
    using Error::Error;
};

/// A loom bug: an invariant between passes was broken. Please report it.
class InternalError : public Error {
public:
    explicit InternalError(const std::string& what)
        : Error("internal error in loom (please report this): " + what) {}
};

/// NVRTC (or the host compiler) rejected generated source. Carries the log, the options and the
/// numbered source so that the message alone is enough to diagnose it.
class CompileError : public Error {
public:
    CompileError(const std::string& what, std::string log, std::string options,
                 std::string numbered_source)
        : Error(what), log_(std::move(log)), options_(std::move(options)),
          source_(std::move(numbered_source)) {}
    const std::string& log() const { return log_; }
    const std::string& options() const { return options_; }
    const std::string& numbered_source() const { return source_; }

private:
    std::string log_, options_, source_;
};

/// A CUDA driver call failed: carries the CUresult name, its description and the call.
class CudaError : public Error {
public:
    CudaError(const std::string& what, std::string error_name, std::string call)
        : Error(what), name_(std::move(error_name)), call_(std::move(call)) {}
    const std::string& error_name() const { return name_; }
    const std::string& call() const { return call_; }

private:
    std::string name_, call_;
};

} // namespace loom
