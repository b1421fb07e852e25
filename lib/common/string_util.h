#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weir {

std::string Trim(std::string_view s);
std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
// A local path from a path or a file URI: "file:///a/b" and "file:/a/b" give "/a/b".
std::string StripFileScheme(std::string_view path_or_uri);

// Joins with `sep`: Join({"a","b"}, ", ") == "a, b".
std::string Join(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace weir
