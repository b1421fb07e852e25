#include "connectors/postgres/pg_sink_options.h"

namespace weir {

void ValidateSinkOptions(const PgSinkOptions& options) {
  if (options.conninfo.empty()) {
    throw PgError("postgres: no connection string\nhint: give one such as 'host=H port=P dbname=D user=U'", "");
  }
  if (options.batch_size < 1) {
    throw PgError("postgres: the batch size must be at least 1, not " + std::to_string(options.batch_size), "");
  }
  ValidateTable(options.table);
}

}  // namespace weir
