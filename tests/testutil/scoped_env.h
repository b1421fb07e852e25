#pragma once
// ScopedEnv: sets (or, with a null value, unsets) an environment variable for the scope and
// restores what was there before when it ends.
//
//   ScopedEnv conf("WEIR_CONF_DIR", dir.c_str());

#include <stdlib.h>

#include <optional>
#include <string>
#include <utility>

namespace weir::testing {

class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value != nullptr) {
      ::setenv(name_.c_str(), value, 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace weir::testing
