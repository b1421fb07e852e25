#!/usr/bin/env python3
"""keyed_state with --value-bytes at a given state size, as a user runs it: fills the state,
checkpoints it N more times with 3 retained, then cancels and restores the newest checkpoint.

Prints, for one configuration: the checkpoints taken at size (end-to-end, synchronous and
asynchronous parts as GET /jobs/:id/checkpoints/details/:cp/subtasks/:vertex reports them,
checkpointed_size and state_size), records/s at size with those checkpoints, the process's
RSS while 3 checkpoints at size are retained, the checkpoint directory's size, the restore time
(from `weir run -s <checkpoint>` to every task RUNNING, which a task reaches once its state is
restored) and records/s of the restored job at size with no checkpoint due. With --s3-log the
run is verbose and the S3 requests of the at-size phase are counted per checkpoint.
Prints figures; not a test. Used by tests/bench/state_backends_job.sh and storage_s3.sh.

  state_at_size.py --weir W --job keyed_state.so --keys K --value-bytes B --dir CP --label L
                   --tmp DIR [--interval 1s] [--at-size 5] [--measure 10] [--s3-log FILE] [-D key=value]...
"""
import argparse, json, os, re, socket, statistics, subprocess, sys, time, urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(port, path):
    with urllib.request.urlopen(f"http://localhost:{port}{path}", timeout=10) as r:
        return json.load(r)


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None


def disk_bytes(path):
    if "://" in path:
        return None
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else 0


STARTED = []  # every `weir run` started here, killed on the way out whatever happens


class Job:
    """`weir run` embedded, in the background, on its own REST port."""

    def __init__(self, a, options, log, flags=(), verbose=False):
        self.port = free_port()
        self.weir = a.weir
        cmd = [a.weir, "run", *flags] + (["-v"] if verbose else []) + ["-D", f"rest.port={self.port}"]
        for d in a.D + options:
            cmd += ["-D", d]
        cmd += [a.job, "--keys", str(a.keys), "--value-bytes", str(a.value_bytes), "--count", "0"]
        self.t0 = time.time()
        self.log = open(log, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log)
        STARTED.append(self.proc)
        self.jid = None
        self.vertex = None

    def alive(self):
        return self.proc.poll() is None

    def fail(self, what):
        self.log.flush()
        tail = open(self.log.name, errors="replace").read()[-600:]
        sys.exit(f"{what}; the job's log ends with:\n{tail}")

    def poll_ids(self):
        if self.jid is None:
            jobs = get(self.port, "/jobs/overview")["jobs"]
            self.jid = jobs[0]["jid"] if jobs else None
        if self.jid and self.vertex is None:
            for v in get(self.port, f"/jobs/{self.jid}")["vertices"]:
                if v["name"].startswith("Key Sum"):
                    self.vertex = v["id"]
        return self.jid and self.vertex

    def job(self):
        return get(self.port, f"/jobs/{self.jid}")

    def records(self, job=None):
        for v in (job or self.job())["vertices"]:
            if v["id"] == self.vertex:
                return v["metrics"]["read-records"]

    def cancel(self):
        subprocess.run([self.weir, "cancel", "-m", f"localhost:{self.port}", self.jid], capture_output=True)
        try:
            self.proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.fail("the job did not end within 300 s of its cancel")
        self.log.close()


def wait_ids(job, deadline):
    while time.time() < deadline:
        if not job.alive():
            job.fail("the job ended")
        try:
            if job.poll_ids():
                return
        except OSError:
            pass
        time.sleep(0.05)
    job.fail("the job did not start")


def checkpoint_phase(a):
    """Fills the state and takes --at-size checkpoints; returns the measurements and the
    newest checkpoint's path."""
    job = Job(a, ["execution.checkpointing.interval=" + a.interval, "execution.checkpointing.num-retained=3",
                  "execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION",
                  "execution.checkpointing.dir=" + a.dir], a.s3_log or os.path.join(a.tmp, "checkpoint.log"),
              verbose=bool(a.s3_log))
    deadline = time.time() + a.timeout
    wait_ids(job, deadline)
    filled_at = filled_records = None
    seen, at_size, rss, disk, last = {}, [], [], 0, None
    while len(at_size) < a.at_size:
        if time.time() > deadline:
            job.fail(f"{len(at_size)} of {a.at_size} checkpoints at size in {a.timeout} s")
        if not job.alive():
            job.fail("the job ended")
        now = time.time()
        try:
            j = job.job()
            n = job.records(j)
            if filled_at is None and n >= a.keys:  # every key holds its payload now
                filled_at, filled_records = now, n
            for e in get(job.port, f"/jobs/{job.jid}/checkpoints")["history"]:
                if e["status"] != "COMPLETED" or e["id"] in seen:
                    continue
                d = get(job.port, f"/jobs/{job.jid}/checkpoints/details/{e['id']}/subtasks/{job.vertex}")
                sub = d["subtasks"][0]["checkpoint"]
                seen[e["id"]] = e
                if filled_at is not None and e["trigger_timestamp"] >= filled_at * 1000:
                    at_size.append(dict(id=e["id"], e2e=e["end_to_end_duration"], sync=sub["sync"], asyn=sub["async"],
                                        written=e["checkpointed_size"], state=e["state_size"],
                                        path=e["external_path"], ack=e["latest_ack_timestamp"] / 1000))
                    last = (now, n)
            r = rss_bytes(job.proc.pid)
            if r and len(at_size) >= 3:  # 3 checkpoints at size are retained
                rss.append(r)
            disk = max(disk, disk_bytes(a.dir) or 0)
        except OSError:
            pass
        time.sleep(0.5)
    fill_s = filled_at - job.t0
    rate = (last[1] - filled_records) / (last[0] - filled_at) if last and last[0] > filled_at else float("nan")
    job.cancel()
    return dict(fill_s=fill_s, cps=at_size, rate=rate, rss=rss, disk=disk, path=at_size[-1]["path"],
                t_from=filled_at, t_to=at_size[-1]["ack"])


def restore_phase(a, path, cp_id):
    """`weir run -s path` with no checkpoint due: seconds to every task RUNNING (a task is RUNNING
    once its state is restored), RSS then, and records/s at size for --measure seconds."""
    # Checkpoints enabled but none due: the REST API then reports what was restored.
    job = Job(a, ["execution.checkpointing.interval=1h", "execution.checkpointing.dir=" + a.dir],
              os.path.join(a.tmp, "restore.log"), flags=("-s", path))
    deadline = job.t0 + a.timeout
    wait_ids(job, deadline)
    while True:
        if time.time() > deadline:
            job.fail(f"not every task RUNNING {a.timeout} s after the restore began")
        if not job.alive():
            job.fail("the restored job ended")
        try:
            j = job.job()
            if all(v["tasks"]["RUNNING"] == v["parallelism"] for v in j["vertices"]):
                break
        except OSError:
            pass
        time.sleep(0.05)
    running_s = time.time() - job.t0
    restored = get(job.port, f"/jobs/{job.jid}/checkpoints")["latest"]["restored"]
    if not restored or restored["id"] != cp_id:
        job.fail(f"the job does not report a restore of checkpoint {cp_id}: {restored}")
    rss = rss_bytes(job.proc.pid)
    t1, n1 = time.time(), job.records()
    time.sleep(a.measure)
    t2, n2 = time.time(), job.records()
    rss_later = rss_bytes(job.proc.pid)
    job.cancel()
    return dict(running_s=running_s, rss=rss, rss_later=rss_later, rate=(n2 - n1) / (t2 - t1))


def s3_requests(log, t_from, t_to):
    """S3 requests logged between t_from and t_to (seconds since the epoch), by kind."""
    kinds = {"uploads": 0, "deletes": 0, "lists": 0, "other": 0}
    line_re = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) .*s3 request: (\w+) (\S+) -> ")
    for line in open(log, errors="replace"):
        m = line_re.match(line)
        if not m:
            continue
        t = time.mktime(time.strptime(m.group(1)[:19], "%Y-%m-%d %H:%M:%S")) + float("0" + m.group(1)[19:])
        if not t_from <= t <= t_to:
            continue
        method, url = m.group(2), m.group(3)
        if "delete=" in url or method == "DELETE":
            kinds["deletes"] += 1
        elif "list-type" in url:
            kinds["lists"] += 1
        elif method in ("PUT", "POST"):
            kinds["uploads"] += 1
        else:
            kinds["other"] += 1
    return kinds


def med_max(xs, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(xs))} (max {fmt.format(max(xs))})"


def main():
    p = argparse.ArgumentParser()
    for name in ("--weir", "--job", "--dir", "--label", "--tmp"):
        p.add_argument(name, required=True)
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--value-bytes", type=int, required=True)
    p.add_argument("--interval", default="1s")
    p.add_argument("--at-size", type=int, default=5)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--measure", type=float, default=10, help="seconds of the restored run measured")
    p.add_argument("--s3-log")
    p.add_argument("-D", action="append", default=[])
    a = p.parse_args()
    ck = checkpoint_phase(a)
    path = ck["path"][len("file:"):] if ck["path"].startswith("file:") else ck["path"]
    rs = restore_phase(a, path, ck["cps"][-1]["id"])
    cps = ck["cps"]
    state_gb = cps[-1]["state"] / 1e9
    print(f"{a.label}: {a.keys} keys x {a.value_bytes} B, state {cps[-1]['state'] / 1e6:.0f} MB,"
          f" filled in {ck['fill_s']:.0f} s")
    print(f"  {len(cps)} checkpoints at size every {a.interval}: end-to-end {med_max([c['e2e'] for c in cps])} ms,"
          f" sync {med_max([c['sync'] for c in cps])} ms, async {med_max([c['asyn'] for c in cps])} ms,"
          f" written {med_max([c['written'] / 1e6 for c in cps])} MB of {cps[-1]['state'] / 1e6:.0f} MB")
    print("    per checkpoint (id e2e/sync/async ms, written MB): " +
          ", ".join(f"{c['id']} {c['e2e']}/{c['sync']}/{c['asyn']} {c['written'] / 1e6:.0f}" for c in cps))
    sync_share = sum(c["sync"] for c in cps) / 1000 / max(1e-9, ck["t_to"] - ck["t_from"])
    print(f"  at size with checkpoints: {ck['rate'] / 1e6:.3f} M records/s; the task spent {100 * sync_share:.0f}%"
          f" of that time in synchronous checkpoint parts")
    if ck["rss"]:
        print(f"  RSS with 3 checkpoints at size retained: median {statistics.median(ck['rss']) / 2**20:.0f} MB,"
              f" max {max(ck['rss']) / 2**20:.0f} MB ({len(ck['rss'])} samples)")
    if ck["disk"]:
        print(f"  checkpoint directory at most {ck['disk'] / 1e6:.0f} MB")
    if a.s3_log:
        r = s3_requests(a.s3_log, ck["t_from"], ck["t_to"])
        print(f"  S3 requests per checkpoint at size: " +
              ", ".join(f"{v / len(cps):.1f} {k}" for k, v in r.items() if v))
    print(f"  restore: {rs['running_s']:.2f} s from weir run -s to every task RUNNING"
          f" ({rs['running_s'] / state_gb:.1f} s per GB); RSS then {rs['rss'] / 2**20:.0f} MB,"
          f" {rs['rss_later'] / 2**20:.0f} MB {a.measure:.0f} s later;"
          f" restored, no checkpoint due: {rs['rate'] / 1e6:.3f} M records/s over {a.measure} s", flush=True)


if __name__ == "__main__":
    try:
        main()
    finally:
        for proc in STARTED:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
