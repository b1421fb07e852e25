// Tests connectors/postgres/pg_table.cc and pg_connection.cc without a server: table
// validation, the statements and COPY lines, connection strings and their errors.
#include "connectors/postgres/pg_table.h"

#include <catch2/catch.hpp>

#include "connectors/postgres/pg_connection.h"

namespace weir {
namespace {

PgTable NumberTable(std::vector<std::string> key) {
  return {"number_sum", {{"n", "BIGINT"}, {"parity", "TEXT"}, {"sum", "BIGINT"}}, std::move(key)};
}

TEST_CASE("pg table: names must be plain SQL identifiers and keys must be columns", "[postgres]") {
  struct Case {
    PgTable table;
    const char* error;  // nullptr: valid
  };
  const Case cases[] = {
      {NumberTable({"n"}), nullptr},
      {{"public.t", {{"a", "INT"}}, {}}, nullptr},
      {{"t_1$", {{"_a", "INT"}}, {"_a"}}, nullptr},
      {{"t; DROP TABLE x", {{"a", "INT"}}, {}}, "table name 't; DROP TABLE x' is not a plain SQL identifier"},
      {{"a.b.c", {{"a", "INT"}}, {}}, "table name 'a.b.c'"},
      {{"1t", {{"a", "INT"}}, {}}, "table name '1t'"},
      {{"", {{"a", "INT"}}, {}}, "table name ''"},
      {{"t", {}, {}}, "table 't' has no columns"},
      {{"t", {{"a b", "INT"}}, {}}, "column name 'a b' is not a plain SQL identifier"},
      {{"t", {{"a", "INT"}}, {"b"}}, "key column 'b' is not a column of table 't'"},
  };
  for (const auto& c : cases) {
    INFO(c.table.name);
    if (!c.error) {
      CHECK_NOTHROW(ValidateTable(c.table));
    } else {
      CHECK_THROWS_WITH(ValidateTable(c.table), Catch::Contains(c.error));
    }
  }
}

TEST_CASE("pg table: the upsert statement updates the non-key columns, or does nothing", "[postgres]") {
  CHECK(UpsertSql(NumberTable({"n"}), 2) ==
        "INSERT INTO number_sum (n, parity, sum) VALUES ($1,$2,$3),($4,$5,$6) ON CONFLICT (n) DO UPDATE SET "
        "parity = EXCLUDED.parity, sum = EXCLUDED.sum");
  CHECK(UpsertSql({"t", {{"a", "INT"}, {"b", "INT"}}, {"a", "b"}}, 1) ==
        "INSERT INTO t (a, b) VALUES ($1,$2) ON CONFLICT (a, b) DO NOTHING");
  CHECK(UpsertSql(NumberTable({"n"}), 1, "NULL") ==
        "INSERT INTO number_sum (n, parity, sum) VALUES (NULL,NULL,NULL) ON CONFLICT (n) DO UPDATE SET "
        "parity = EXCLUDED.parity, sum = EXCLUDED.sum");
}

TEST_CASE("pg table: COPY lines escape tabs, newlines and backslashes, and write NULL as \\N", "[postgres]") {
  std::string out;
  AppendCopyLine({std::string("1"), std::string("a\tb\nc\\d\re"), std::nullopt}, 3, &out);
  CHECK(out == "1\ta\\tb\\nc\\\\d\\re\t\\N\n");
  CHECK_THROWS_WITH(AppendCopyLine({std::string("1")}, 3, &out), Catch::Contains("a row has 1 values for 3 columns"));
}

TEST_CASE("pg connection: the server is described without the password", "[postgres]") {
  CHECK(DescribeConninfo("host=127.0.0.1 port=5433 dbname=db user=u password=secret") ==
        "host=127.0.0.1 port=5433 dbname=db user=u");
  CHECK(DescribeConninfo("postgresql://u:secret@localhost:5433/db") == "host=localhost port=5433 dbname=db user=u");
  CHECK_THROWS_WITH(DescribeConninfo("host=a port"), Catch::Contains("invalid connection string"));
}

TEST_CASE("pg connection: no server on the port is an error naming it, with a hint and no password", "[postgres]") {
  // Port 1 on loopback: nothing listens there, and only root could.
  try {
    PgConnection conn("host=127.0.0.1 port=1 user=u password=topsecret connect_timeout=2");
    FAIL("connected to port 1");
  } catch (const PgError& e) {
    std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("cannot connect to host=127.0.0.1 port=1 user=u"));
    CHECK_THAT(what, Catch::Contains("hint: is the server running"));
    CHECK(what.find("topsecret") == std::string::npos);
  }
}

}  // namespace
}  // namespace weir
