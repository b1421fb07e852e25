#pragma once
// The one header a job includes.

#include "lib/api/connected_streams.h"
#include "lib/api/connectors/file_sink.h"
#include "lib/api/connectors/file_source.h"
#include "lib/api/connectors/print_sink.h"
#include "lib/api/connectors/sequence_source.h"
#include "lib/api/job.h"
#include "lib/api/stream.h"
#include "lib/common/status.h"
#include "lib/common/string_util.h"
