#pragma once
// How sinks turn a record into a line of text: strings as they are, numbers in
// decimal, anything else through operator<<.

#include <sstream>
#include <string>
#include <type_traits>

namespace weir {

template <class T>
std::string ToLine(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    std::ostringstream s;
    s << v;
    return s.str();
  }
}

}  // namespace weir
