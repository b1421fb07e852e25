#include "lib/client/endpoint.h"

#include <charconv>

namespace weir {

std::string Endpoint::ToHostPort() const {
  bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string Endpoint::ToUrl() const { return scheme + "://" + ToHostPort(); }

Result<Endpoint> ParseEndpoint(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("invalid endpoint '" + std::string(text) + "': " + why)
        .WithHint("give it as host:port, e.g. -m localhost:8081");
  };
  Endpoint endpoint;
  std::string_view rest = text;
  if (auto pos = rest.find("://"); pos != std::string_view::npos) {
    std::string_view scheme = rest.substr(0, pos);
    if (scheme != "http" && scheme != "https") {
      return bad("the scheme must be http or https");
    }
    endpoint.scheme = std::string(scheme);
    rest.remove_prefix(pos + 3);
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) return bad("a path is not allowed");

  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) return bad("missing ']' after the IPv6 address");
    endpoint.host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (after.empty() || after.front() != ':') return bad("missing port");
    port_text = after.substr(1);
  } else {
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) return bad("missing port");
    endpoint.host = std::string(rest.substr(0, colon));
    if (endpoint.host.find(':') != std::string::npos) {
      return bad("put an IPv6 address in brackets, e.g. [::1]:8081");
    }
    port_text = rest.substr(colon + 1);
  }
  if (endpoint.host.empty()) return bad("missing host");
  int port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      port < 1 || port > 65535) {
    return bad("the port must be a number from 1 to 65535");
  }
  endpoint.port = port;
  return endpoint;
}

}  // namespace weir
