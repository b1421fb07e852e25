#include <catch2/catch.hpp>

#include "lib/client/endpoint.h"

namespace weir {

TEST_CASE("endpoint: accepted spellings", "[client][endpoint]") {
  struct Case {
    const char* text;
    const char* scheme;
    const char* host;
    int port;
    const char* url;
  };
  const Case cases[] = {
      {"localhost:8081", "http", "localhost", 8081, "http://localhost:8081"},
      {"127.0.0.1:1", "http", "127.0.0.1", 1, "http://127.0.0.1:1"},
      {"http://flink.example.com:8081/", "http", "flink.example.com", 8081,
       "http://flink.example.com:8081"},
      {"https://jm:443", "https", "jm", 443, "https://jm:443"},
      {"[::1]:65535", "http", "::1", 65535, "http://[::1]:65535"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto e = ParseEndpoint(c.text);
    REQUIRE(e.ok());
    CHECK(e->scheme == c.scheme);
    CHECK(e->host == c.host);
    CHECK(e->port == c.port);
    CHECK(e->ToUrl() == c.url);
  }
}

TEST_CASE("endpoint: rejected spellings name the text", "[client][endpoint]") {
  const char* bad[] = {"localhost", "localhost:", ":8081", "localhost:0", "localhost:65536",
                       "localhost:80x", "ftp://h:21", "h:8081/v1", "::1:8081", "[::1:8081"};
  for (const char* text : bad) {
    INFO(text);
    auto e = ParseEndpoint(text);
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().IsInvalidArgument());
    CHECK(e.status().message().find(std::string("'") + text + "'") != std::string::npos);
    CHECK_FALSE(e.status().hint().empty());
  }
}

}  // namespace weir
