// A small result type: a value or an error message. (std::expected is C++23; Keel builds
// as C++20 with gcc 12 and clang 14.)
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace keel {

/// An error for bad input or a capacity limit, with a message that says what to change.
struct Error {
  std::string message;
};

/// Holds either a T or an Error.
template <class T>
class Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const Error& error() const { return error_; }

 private:
  std::optional<T> value_;
  Error error_;
};

/// Success or an Error, for operations that return nothing.
class Status {
 public:
  Status() = default;
  Status(Error error) : failed_(true), error_(std::move(error)) {}  // NOLINT: implicit by design
  static Status ok() { return Status(); }

  bool has_value() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const Error& error() const { return error_; }

 private:
  bool failed_ = false;
  Error error_;
};

}  // namespace keel
