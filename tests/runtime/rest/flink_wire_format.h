#pragma once
// Flink's REST wire format where its OpenAPI file does not describe what Flink sends:
// the error body, SerializedThrowable, the job execution result and the checkpoint
// config's mode. Test data: the tests check weir's responses against this text.

#include <string>

namespace weir::testing {

inline const std::string kFlinkWireFormat = R"FLINK(
### 3.2 Error responses

Every handler error comes back as JSON **`{"errors": ["<message>", ...]}`** with a 4xx/5xx code: 400 for a bad
request or path parameter, 404 for an unknown job/trigger/jar/resource, 500 internal, 503 when the endpoint is not yet leader.
The Java client turns this into `RestClientException` (message includes the list and the status).
Example seen for a missing web UI file: `{"errors":["Unable to load requested file /index.html."]}`.
The exact message texts per handler are **[unverified]**.

### 3.3 `SerializedThrowable` (every `failure-cause` / `failureCause`)

JSON object: `{"class": "<original exception class>", "stack-trace": "<full stringified trace>",
"serialized-throwable": "<base64 Java serialization>"}`. The newest master also writes optional `"message"`,
`"cause"` (nested, same shape) and `"suppressed"` (array), and keeps the binary blob for old readers. A C++ client
should show `class` and `stack-trace` and ignore the blob. A C++ server can't produce a real blob; the Java client
needs it to rebuild the exception **[behaviour of the Java client on a missing or invalid blob unverified]**.

---------------------------------------------------------------------------------------------

### 4.4 Job execution result (`GET /jobs/:jobid/execution-result`)

`{"status": {"id": "IN_PROGRESS"}}` while running. When done:
`{"status":{"id":"COMPLETED"},"job-execution-result":{"id":"<jobid>","application-status":"SUCCEEDED"|"FAILED"|"CANCELED"|"UNKNOWN","accumulator-results":{"<name>":<serialized value>},"net-runtime":<ms>,"failure-cause":<SerializedThrowable, only on failure>}}`.
Flink 2.x's `JobResultSerializer` also writes `"name":"<job name>"`, `"start-time":<ms>` and `"end-time":<ms>`
(and `"application-id"` for application-mode jobs); its `JobResultDeserializer` reads them and ignores unknown fields.
**The OpenAPI schema (`JobResult`: `jobId`, `applicationStatus`, `netRuntime`, `accumulatorResults`,
`serializedThrowable`, `success`) does not match the JSON on the wire.** The real serializer
(`JobResultSerializer`) writes the kebab-case names above.

### 5.7 `GET /jobs/:jobid/checkpoints/config` (`CheckpointConfigInfo`)
`{"mode": "exactly_once"|"at_least_once", "interval": <ms>, "timeout": <ms>, "min_pause": <ms>,
"max_concurrent": n, "externalization": {"enabled": bool, "delete_on_cancellation": bool},
"state_backend": "HashMapStateBackend"|…, "checkpoint_storage": "FileSystemCheckpointStorage"|…,
"unaligned_checkpoints": bool, "tolerable_failed_checkpoints": n, "aligned_checkpoint_timeout": <ms>,
"checkpoints_after_tasks_finish": bool, "state_changelog_enabled": bool,
"changelog_periodic_materialization_interval": <ms>, "changelog_storage": "…"}`.
The schema lists `mode` as `AT_LEAST_ONCE|EXACTLY_ONCE`. The wire value is lower-case as shown
**[lower-case serialization unverified]**.
)FLINK";

}  // namespace weir::testing
