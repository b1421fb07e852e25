#pragma once
// Status and Result: errors as values inside lib/ and runtime/.
//
// A Status is OK or carries a code, a message that names the subject
// ("checkpoint 42: cannot rename '/x': No space left on device") and an optional
// hint that tells the user the way out. Exit codes and HTTP codes are derived from
// the code at the boundaries (lib/cli/exit_code.h, runtime/rest/).

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace weir {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad user input (flags, config values, request bodies)
  kNotFound,            // unknown job, jar, trigger, file
  kAlreadyExists,
  kFailedPrecondition,  // e.g. the job is not running
  kAborted,             // a checkpoint declined or superseded
  kCancelled,           // the operation was cancelled (task cancellation)
  kUnavailable,         // the endpoint could not be reached
  kTimedOut,
  kIOError,
  kCorruption,          // a file failed its format or checksum check
  kInternal,
};

// Upper-case name of a code, e.g. "NOT_FOUND".
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) { return {StatusCode::kAlreadyExists, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) { return {StatusCode::kFailedPrecondition, std::move(msg)}; }
  static Status Aborted(std::string msg) { return {StatusCode::kAborted, std::move(msg)}; }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status TimedOut(std::string msg) { return {StatusCode::kTimedOut, std::move(msg)}; }
  static Status IOError(std::string msg) { return {StatusCode::kIOError, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

  bool IsInvalidArgument() const { return code_ == StatusCode::kInvalidArgument; }
  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsUnavailable() const { return code_ == StatusCode::kUnavailable; }
  bool IsCancelled() const { return code_ == StatusCode::kCancelled; }

  // Returns a copy with a hint ("run 'weir list' to see running jobs").
  Status WithHint(std::string hint) const& {
    Status s = *this;
    s.hint_ = std::move(hint);
    return s;
  }
  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(const std::string& context) const& {
    Status s = *this;
    s.message_ = context + ": " + message_;
    return s;
  }

  // "NOT_FOUND: message".
  std::string ToString() const;

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string hint_;
};

// A value or a non-OK Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace weir

#define WEIR_CONCAT_INNER(a, b) a##b
#define WEIR_CONCAT(a, b) WEIR_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function when it is not OK.
#define WEIR_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::weir::Status _weir_st = (expr);       \
    if (!_weir_st.ok()) return _weir_st;    \
  } while (0)

// `WEIR_ASSIGN_OR_RETURN(auto x, MakeX());`
#define WEIR_ASSIGN_OR_RETURN(lhs, expr)                          \
  auto WEIR_CONCAT(_weir_r, __LINE__) = (expr);                   \
  if (!WEIR_CONCAT(_weir_r, __LINE__).ok())                       \
    return WEIR_CONCAT(_weir_r, __LINE__).status();               \
  lhs = std::move(WEIR_CONCAT(_weir_r, __LINE__)).value()
