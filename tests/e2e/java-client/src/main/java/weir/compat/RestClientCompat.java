package weir.compat;

import java.io.File;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.jobgraph.JobType;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.rest.handler.legacy.messages.ClusterOverviewWithVersion;
import org.apache.flink.runtime.rest.messages.job.JobDetailsInfo;
import org.apache.flink.runtime.rest.util.RestClientException;
import org.apache.flink.util.ExceptionUtils;

/**
 * Drives weir-runtime with Flink's own Java REST client, {@link RestClusterClient}, the way
 * schedulers and tools that embed Flink's client do, and checks every answer.
 *
 * <p>Usage: {@code RestClientCompat <host> <port> <savepointDir> <jobToStop> <jobToCancel>}.
 * Both jobs must be RUNNING, endless and named "Number Sum". The first gets checkpoints, a
 * savepoint (then disposed) and is stopped with a savepoint; the second is cancelled.
 *
 * <p>Prints one "ok"/"FAIL" line per check and ends with "N passed, M failed"; exits 1 when a
 * check failed, 2 on bad arguments.
 */
public final class RestClientCompat {
    private static final long TIMEOUT_S = 60;
    private static final JobID UNKNOWN_JOB = JobID.fromHexString("0123456789abcdef0123456789abcdef");

    private int passed;
    private int failed;

    private interface Check {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println(
                    "usage: RestClientCompat <host> <port> <savepointDir> <jobToStop> <jobToCancel>");
            System.exit(2);
        }
        Configuration config = new Configuration();
        config.set(RestOptions.ADDRESS, args[0]);
        config.set(RestOptions.PORT, Integer.parseInt(args[1]));
        // An answer the client cannot parse fails at once instead of being retried for minutes.
        config.set(RestOptions.RETRY_MAX_ATTEMPTS, 0);
        RestClientCompat compat = new RestClientCompat();
        try (RestClusterClient<StandaloneClusterId> client =
                new RestClusterClient<>(config, StandaloneClusterId.getInstance())) {
            compat.runAll(
                    client,
                    args[2],
                    JobID.fromHexString(args[3]),
                    JobID.fromHexString(args[4]));
        }
        System.out.println(compat.passed + " passed, " + compat.failed + " failed");
        System.exit(compat.failed == 0 ? 0 : 1);
    }

    private void runAll(
            RestClusterClient<StandaloneClusterId> client,
            String savepointDir,
            JobID stopJob,
            JobID cancelJob) {
        check("getClusterOverview: one TaskManager and a version", () -> {
            ClusterOverviewWithVersion overview = get(client.getClusterOverview());
            expect(overview.getNumTaskManagersConnected() >= 1, "no TaskManager: " + overview);
            expect(overview.getVersion() != null && !overview.getVersion().isEmpty(), "no version");
            expect(overview.getNumJobsRunningOrPending() >= 2,
                    "expected 2 running jobs, got " + overview.getNumJobsRunningOrPending());
        });

        check("listJobs: both jobs RUNNING, named 'Number Sum'", () -> {
            Collection<JobStatusMessage> jobs = get(client.listJobs());
            for (JobID id : List.of(stopJob, cancelJob)) {
                JobStatusMessage job = find(jobs, id);
                expect(job.getJobState() == JobStatus.RUNNING, id + " is " + job.getJobState());
                expect("Number Sum".equals(job.getJobName()), "name '" + job.getJobName() + "'");
                expect(job.getStartTime() > 0, "start time " + job.getStartTime());
            }
        });

        check("getJobDetails: a streaming job with vertices in one slot sharing group", () -> {
            JobDetailsInfo details = get(client.getJobDetails(stopJob));
            expect(details.getJobId().equals(stopJob), "jid " + details.getJobId());
            expect(details.getJobStatus() == JobStatus.RUNNING, "state " + details.getJobStatus());
            expect(details.getJobType() == JobType.STREAMING, "job-type " + details.getJobType());
            expect(details.getSchedulerType() != null, "no schedulerType");
            expect(details.getPendingOperators() == 0, "pending-operators " + details.getPendingOperators());
            expect(!details.getJobVertexInfos().isEmpty(), "no vertices");
            Object group = null;
            for (JobDetailsInfo.JobVertexDetailsInfo v : details.getJobVertexInfos()) {
                expect(v.getSlotSharingGroupId() != null, "vertex " + v.getName() + " has no slotSharingGroupId");
                expect(group == null || group.equals(v.getSlotSharingGroupId()),
                        "vertices in different slot sharing groups");
                group = v.getSlotSharingGroupId();
                expect(v.getParallelism() >= 1, "vertex parallelism " + v.getParallelism());
            }
            expect(details.getPlan().getNodes().size() == details.getJobVertexInfos().size(),
                    "plan nodes and vertices differ");
        });

        check("getJobStatus: RUNNING", () -> {
            JobStatus status = get(client.getJobStatus(stopJob));
            expect(status == JobStatus.RUNNING, "status " + status);
        });

        check("getAccumulators: no user accumulators", () -> {
            Map<String, Object> accumulators =
                    get(client.getAccumulators(stopJob, RestClientCompat.class.getClassLoader()));
            expect(accumulators.isEmpty(), "accumulators " + accumulators);
        });

        long[] lastCheckpoint = {0};
        check("triggerCheckpoint CONFIGURED: a checkpoint id", () -> {
            long id = get(client.triggerCheckpoint(stopJob, CheckpointType.CONFIGURED));
            expect(id > 0, "checkpoint id " + id);
            lastCheckpoint[0] = id;
        });

        check("triggerCheckpoint FULL: a newer checkpoint id", () -> {
            long id = get(client.triggerCheckpoint(stopJob, CheckpointType.FULL));
            expect(id > lastCheckpoint[0], "checkpoint id " + id + " after " + lastCheckpoint[0]);
        });

        check("triggerCheckpoint INCREMENTAL: refused with a reason", () -> {
            Throwable error = failure(client.triggerCheckpoint(stopJob, CheckpointType.INCREMENTAL));
            expect(text(error).contains("INCREMENTAL"), "the error does not name INCREMENTAL: " + text(error));
        });

        String[] savepoint = {null};
        check("triggerSavepoint: a weir savepoint under the directory", () -> {
            String location = get(client.triggerSavepoint(stopJob, savepointDir, SavepointFormatType.CANONICAL));
            File dir = new File(URI.create(location.startsWith("file:") ? location : "file:" + location).getPath());
            expect(dir.getPath().startsWith(new File(savepointDir).getPath()), "location " + location);
            expect(new File(dir, "_metadata").isFile(), "no _metadata in " + dir);
            savepoint[0] = dir.getPath();
        });

        check("disposeSavepoint: the savepoint is gone", () -> {
            expect(savepoint[0] != null, "no savepoint to dispose");
            get(client.disposeSavepoint(savepoint[0]));
            expect(!new File(savepoint[0]).exists(), savepoint[0] + " still exists");
        });

        check("stopWithSavepoint: a savepoint, then the job FINISHED and SUCCEEDED", () -> {
            String location = get(client.stopWithSavepoint(stopJob, false, savepointDir, SavepointFormatType.CANONICAL));
            expect(location.contains("savepoint-"), "location " + location);
            JobResult result = get(client.requestJobResult(stopJob));
            expect(result.getJobId().equals(stopJob), "result of " + result.getJobId());
            expect(result.isSuccess(), "not a success: " + result.getJobStatus());
            expect(result.getJobStatus().equals(Optional.of(JobStatus.FINISHED)),
                    "job status " + result.getJobStatus());
            expect("Number Sum".equals(result.getJobName()), "job name '" + result.getJobName() + "'");
            expect(result.getNetRuntime() >= 0, "net runtime " + result.getNetRuntime());
            expect(get(client.getJobStatus(stopJob)) == JobStatus.FINISHED, "not FINISHED");
        });

        check("cancel: the job CANCELED", () -> {
            get(client.cancel(cancelJob));
            JobResult result = get(client.requestJobResult(cancelJob));
            expect(result.getJobStatus().equals(Optional.of(JobStatus.CANCELED)),
                    "job status " + result.getJobStatus());
            expect(get(client.getJobStatus(cancelJob)) == JobStatus.CANCELED, "not CANCELED");
        });

        check("listJobs: FINISHED and CANCELED afterwards", () -> {
            Collection<JobStatusMessage> jobs = get(client.listJobs());
            expect(find(jobs, stopJob).getJobState() == JobStatus.FINISHED, "stopped job not FINISHED");
            expect(find(jobs, cancelJob).getJobState() == JobStatus.CANCELED, "cancelled job not CANCELED");
        });

        check("a checkpoint of a finished job fails", () -> {
            Throwable error = failure(client.triggerCheckpoint(stopJob, CheckpointType.CONFIGURED));
            expect(text(error).contains("FINISHED"), "the error does not say FINISHED: " + text(error));
        });

        check("unknown job: getJobStatus and getJobDetails answer 404", () -> {
            for (CompletableFuture<?> f : List.of(client.getJobStatus(UNKNOWN_JOB), client.getJobDetails(UNKNOWN_JOB))) {
                Throwable error = failure(f);
                Optional<RestClientException> rest = ExceptionUtils.findThrowable(error, RestClientException.class);
                expect(rest.isPresent(), "not a RestClientException: " + text(error));
                expect(rest.get().getHttpResponseStatus().code() == 404, "HTTP " + rest.get().getHttpResponseStatus());
            }
        });

        check("unknown job: savepoint and checkpoint fail naming the job", () -> {
            for (CompletableFuture<?> f : List.of(
                    client.triggerSavepoint(UNKNOWN_JOB, savepointDir, SavepointFormatType.CANONICAL),
                    client.triggerCheckpoint(UNKNOWN_JOB, CheckpointType.CONFIGURED))) {
                Throwable error = failure(f);
                expect(text(error).contains(UNKNOWN_JOB.toHexString()) && text(error).contains("not found"),
                        "the error does not say the job was not found: " + text(error));
            }
        });

        check("disposeSavepoint of something that is not a savepoint fails", () -> {
            Throwable error = failure(client.disposeSavepoint(savepointDir + "/no-such-savepoint"));
            expect(text(error).contains("no-such-savepoint"), "the error does not name the path: " + text(error));
        });
    }

    private void check(String name, Check check) {
        try {
            check.run();
            passed++;
            System.out.println("ok   " + name);
        } catch (Throwable t) {
            failed++;
            System.out.println("FAIL " + name + ": " + text(t));
        }
        System.out.flush();
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    /** The error `future` completes with; fails the check when it succeeds. */
    private static Throwable failure(CompletableFuture<?> future) throws Exception {
        try {
            Object value = future.get(TIMEOUT_S, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure, got " + value);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        }
    }

    private static JobStatusMessage find(Collection<JobStatusMessage> jobs, JobID id) {
        for (JobStatusMessage job : jobs) {
            if (job.getJobId().equals(id)) {
                return job;
            }
        }
        throw new AssertionError("job " + id + " is not listed");
    }

    private static void expect(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    /** The exception chain in one line: "Class: message <- Class: message ...". */
    private static String text(Throwable t) {
        List<String> parts = new ArrayList<>();
        for (Throwable c = t; c != null && parts.size() < 8; c = c.getCause()) {
            parts.add(c.getClass().getSimpleName() + ": " + c.getMessage());
            if (c.getCause() == c) {
                break;
            }
        }
        return String.join(" <- ", parts).replace('\n', ' ');
    }
}
