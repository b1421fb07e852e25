#!/usr/bin/env python3
"""Runs weir's benchmark jobs and their Flink counterparts alternately, several rounds, and
prints a table of medians: throughput, the weir/Flink ratio (of the medians, and the median of
each round's), max RSS and CPU seconds.

Started by tests/bench/vs-flink/run.sh, which builds both sides; see that file for the options.
Not a pass/fail test: it exits 1 only when a job fails or processes the wrong number of
records, and 2 on bad arguments.
"""
import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_TIMEOUT_S = 900
# keyed sum with many keys on RocksDB runs far fewer records than on the heap, so that a run takes
# 5 to 30 s on each side.
ROCKSDB_COUNT_DEFAULT = 2_000_000
JOBS = ("keyed-sum", "many-keys", "many-keys-rocksdb", "word-count", "window-sum", "window-sliding")
# The windowed sums: 1 s event-time windows, tumbling (slide 0) or sliding every 100 ms (10
# windows per record).
WINDOW_SLIDE_MS = {"window-sum": 0, "window-sliding": 100}


@dataclass
class Scenario:
    name: str  # the row label
    job: str  # one of JOBS
    parallelism: int
    checkpoint_ms: int  # 0: no checkpoints
    unit: str  # what the rate counts
    work: int  # records or words the job processes
    backend: str = "hashmap"  # the state backend of both sides: hashmap or rocksdb


@dataclass
class Run:
    runtime_ms: int
    wall_s: float
    max_rss_mb: float
    cpu_s: float
    checkpoints: int
    steal_pct: Optional[float] = None  # of the machine's CPU time while it ran; None: not known
    round: int = 0  # the round it ran in, from 0
    idle_pct: Optional[float] = None  # the cores' idle share of the machine's CPU time while it ran


@dataclass
class Side:
    name: str
    runs: dict = field(default_factory=dict)  # scenario name -> [Run]
    skipped: dict = field(default_factory=dict)  # scenario name -> why


def fail(message, hint=None, code=1):
    print(f"vs-flink: {message}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    sys.exit(code)


def csv_list(kind, convert):
    def parse(text):
        try:
            values = [convert(v) for v in text.split(",") if v]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind}: expected a comma-separated list, got '{text}'")
        if not values:
            raise argparse.ArgumentTypeError(f"{kind}: empty list")
        return values
    return parse


def checkpoint_ms(text):
    m = re.fullmatch(r"(none|\d+)(ms|s)?", text)
    if not m:
        raise ValueError(text)
    if m.group(1) == "none":
        return 0
    return int(m.group(1)) * (1000 if m.group(2) == "s" else 1)


def machine_cpu_times():
    """(steal, idle, total) jiffies of all cores so far, from /proc/stat; None where it is not
    there. Steal is the time a virtual machine's cores were ready to run but the host ran
    something else: a run during which it is high ran slower for reasons outside both sides.
    Idle (with iowait) is the time no thread was on a core: a job with more busy threads than
    cores that leaves cores idle waited on its own hand-offs or on where the kernel put its
    threads, not on work."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
    # counted in user and nice.
    jiffies = [int(x) for x in fields[1:9]]
    return jiffies[7], jiffies[3] + jiffies[4], sum(jiffies)


def share_percent(before, after, which):
    """The share of the machine's CPU time between two machine_cpu_times() that was `which`
    ("steal" or "idle"), or None."""
    if before is None or after is None or after[2] <= before[2]:
        return None
    i = {"steal": 0, "idle": 1}[which]
    return 100.0 * (after[i] - before[i]) / (after[2] - before[2])


def measure(cmd, log_path, env=None):
    """Runs cmd with stdout+stderr into log_path; returns (exit code, wall s, max RSS MB, CPU s,
    the child's resource usage). Waits blocked in wait4, so that the measuring process takes
    no core from the measured one while it runs (a timer kills the run after RUN_TIMEOUT_S)."""
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        watchdog = threading.Timer(RUN_TIMEOUT_S, proc.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    # ru_maxrss is in KiB on Linux; the child's usage includes the descendants it waited for.
    return proc.returncode, wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime, usage


class Weir:
    def __init__(self, build, tmp):
        self.weir = os.path.join(build, "bin", "weir")
        self.examples = os.path.join(build, "examples")
        self.tmp = tmp
        self.has_keys = self._number_sum_takes_keys()

    def _number_sum_takes_keys(self):
        probe = subprocess.run([self.weir, "run", "-D", f"rest.port={free_port()}",
                                os.path.join(self.examples, "number_sum.so"),
                                "--count", "1", "--keys", "2", "--sink", "discard"],
                               capture_output=True, text=True)
        return probe.returncode == 0

    def skip_reason(self, s):
        if s.job.startswith("many-keys") and not self.has_keys:
            return "number_sum has no --keys yet"
        return None

    def command(self, s, args, cp_dir):
        cmd = [self.weir, "run", "-v", "-p", str(s.parallelism), "-D", f"rest.port={free_port()}",
               "-D", f"state.backend.type={s.backend}"]
        if s.checkpoint_ms:
            cmd += ["-D", f"execution.checkpointing.interval={s.checkpoint_ms}ms",
                    "-D", "execution.checkpointing.mode=EXACTLY_ONCE",
                    "-D", f"execution.checkpointing.dir={cp_dir}"]
            if s.backend == "rocksdb":
                cmd += ["-D", "execution.checkpointing.incremental=true"]
        if s.job == "word-count":
            return cmd + [os.path.join(self.examples, "word_count.so"), "--input", args.text_dir,
                          "--sink", "discard"]
        if s.job in WINDOW_SLIDE_MS:
            return cmd + [os.path.join(self.examples, "window_sum.so"), "--count", str(args.count),
                          "--window-ms", "1000", "--slide-ms", str(WINDOW_SLIDE_MS[s.job]), "--sink", "discard"]
        cmd += [os.path.join(self.examples, "number_sum.so"), "--count", str(s.work), "--sink", "discard"]
        if s.job.startswith("many-keys"):
            cmd += ["--keys", str(args.many_keys)]
        elif self.has_keys:
            cmd += ["--keys", "2"]
        return cmd

    def parse(self, s, log):
        m = re.search(r"^Job Runtime: (\d+) ms$", log, re.M)
        if not m:
            return None, "no 'Job Runtime' line"
        return (int(m.group(1)), len(re.findall(r"checkpoint=\d+ completed", log))), None


class Flink:
    def __init__(self, java, flink_home, classes):
        self.java = java
        self.classpath = f"{classes}:{flink_home}/lib/*"
        self.java_opts = flink_java_opts(flink_home)

    def skip_reason(self, s):
        return None

    def command(self, s, args, cp_dir):
        cmd = [self.java] + self.java_opts + ["-cp", self.classpath]
        if s.job == "word-count":
            cmd += ["weir.bench.WordCount", "--input", args.text_dir]
        elif s.job in WINDOW_SLIDE_MS:
            cmd += ["weir.bench.WindowSum", "--count", str(args.count), "--window-ms", "1000",
                    "--slide-ms", str(WINDOW_SLIDE_MS[s.job])]
        else:
            keys = args.many_keys if s.job.startswith("many-keys") else 2
            cmd += ["weir.bench.NumberSum", "--count", str(s.work), "--keys", str(keys)]
        cmd += ["--parallelism", str(s.parallelism), "--state-backend", s.backend]
        if s.checkpoint_ms:
            cmd += ["--checkpoint-interval-ms", str(s.checkpoint_ms), "--checkpoint-dir", cp_dir]
        return cmd

    def parse(self, s, log):
        m = re.search(r"^result runtime_ms=(\d+) records=(\d+) checkpoints=(\d+)$", log, re.M)
        if not m:
            return None, "no 'result' line"
        if int(m.group(2)) != s.work:
            return None, f"processed {m.group(2)} records, expected {s.work}"
        return (int(m.group(1)), int(m.group(3))), None


def flink_java_opts(flink_home):
    """The --add-opens/--add-exports list of Flink's shipped config (as scripts/peers/flink.sh)."""
    text = open(os.path.join(flink_home, "conf", "config.yaml")).read()
    m = re.search(r"^\s*(?:env\.java\.opts\.)?all:\s*(.+)$", text, re.M)
    return m.group(1).strip().strip('"').split() if m else []


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenarios(args, text_words):
    out = []
    labels = {"keyed-sum": "keyed sum, 2 keys", "many-keys": f"keyed sum, {args.many_keys} keys",
              "many-keys-rocksdb": f"keyed sum, {args.many_keys} keys, rocksdb",
              "word-count": "word count", "window-sum": "window sum, tumbling 1 s",
              "window-sliding": "window sum, sliding 1 s / 100 ms"}
    for job in args.jobs:
        for p in args.parallelism:
            for cp in args.checkpoints:
                unit = "words" if job == "word-count" else "records"
                work = {"word-count": text_words, "many-keys-rocksdb": args.rocksdb_count}.get(job, args.count)
                backend = "rocksdb" if job.endswith("-rocksdb") else "hashmap"
                cp_label = f"{cp} ms" if cp else "none"
                out.append(Scenario(f"{labels[job]} | p={p} | {cp_label}", job, p, cp, unit, work, backend))
    return out


def run_one(side, s, args, tmp, index, csv, round_index=0):
    """Runs row `s` on `side` once and records it: in side.runs, the CSV and a line of output."""
    run = execute(side, s, args, tmp, index, round_index)
    if run is None:
        return
    side.runs.setdefault(s.name, []).append(run)
    if csv:
        csv.write(f"{side.name},{s.job},{s.parallelism},{s.checkpoint_ms},{s.work},{run.runtime_ms},"
                  f"{run.wall_s:.3f},{run.max_rss_mb:.1f},{run.cpu_s:.3f},{run.checkpoints},"
                  f"{'' if run.steal_pct is None else f'{run.steal_pct:.1f}'},"
                  f"{'' if run.idle_pct is None else f'{run.idle_pct:.1f}'},{round_index + 1}\n")
        csv.flush()
    rate = s.work / max(run.runtime_ms, 1) / 1000.0
    print(f"  {side.name:5} {s.name}: {run.runtime_ms} ms, {rate:.2f} M {s.unit}/s, "
          f"{run.max_rss_mb:.0f} MB, {run.cpu_s:.1f} CPU s, {run.checkpoints} checkpoints"
          + ("" if run.steal_pct is None else f", steal {run.steal_pct:.0f}%")
          + ("" if run.idle_pct is None else f", cores idle {run.idle_pct:.0f}%"), flush=True)


def execute(side, s, args, tmp, index, round_index=0):
    """Runs row `s` on `side` once: its Run, or None when it failed (said on stderr, its log kept,
    side.failures counted)."""
    cp_dir = tempfile.mkdtemp(prefix="cp-", dir=tmp)
    log_path = os.path.join(tmp, f"{side.name.lower()}-{index}.log")
    cmd = side.impl.command(s, args, cp_dir)
    times_before = machine_cpu_times()
    code, wall, rss, cpu, _ = measure(cmd, log_path)
    times_after = machine_cpu_times()
    steal, idle = (share_percent(times_before, times_after, which) for which in ("steal", "idle"))
    shutil.rmtree(cp_dir, ignore_errors=True)
    log = open(log_path, errors="replace").read()
    parsed, problem = (None, f"exit code {code}") if code != 0 else side.impl.parse(s, log)
    if problem:
        kept = os.path.join(args.keep_logs, os.path.basename(log_path))
        shutil.copy(log_path, kept)
        print(f"vs-flink: {side.name} failed on '{s.name}': {problem}; log: {kept}\n"
              f"  command: {' '.join(cmd)}", file=sys.stderr)
        side.failures += 1
        return None
    runtime_ms, checkpoints = parsed
    return Run(runtime_ms, wall, rss, cpu, checkpoints, steal, round_index, idle)


def median_of(runs, f):
    return statistics.median(f(r) for r in runs)


def rate_of(s, runs):
    return s.work / median_of(runs, lambda r: r.runtime_ms) / 1000.0


def paired_by_round(a_runs, b_runs):
    """The runtime of b over a's in each round in which both rows ran, in a's order. Within a
    round the two runs are seconds apart, so such a ratio cancels the drift of the machine's
    speed from round to round (minutes on a virtual machine), which a ratio of two medians
    keeps. For rows of equal work it is a's speed against b's."""
    b_by_round = {r.round: r for r in b_runs}
    return [b_by_round[a.round].runtime_ms / max(a.runtime_ms, 1) for a in a_runs if a.round in b_by_round]


def print_table(all_scenarios, sides):
    weir, flink = sides[0], sides[1] if len(sides) > 1 else None
    head = ["job", "p", "checkpoints", "unit", "weir M/s"]
    if flink:
        head += ["Flink M/s", "weir/Flink", "weir/Flink by round"]
    head += ["weir RSS MB"] + (["Flink RSS MB"] if flink else []) + ["weir CPU s"] + (["Flink CPU s"] if flink else [])
    head += ["weir chk"] + (["Flink chk"] if flink else [])
    rows = []
    for s in all_scenarios:
        job, p, cp = s.name.split(" | ")
        row = [job, p[2:], cp, s.unit]
        cells = {}
        for side in sides:
            runs = side.runs.get(s.name)
            if runs:
                cells[side.name] = (f"{rate_of(s, runs):.2f}", f"{median_of(runs, lambda r: r.max_rss_mb):.0f}",
                                    f"{median_of(runs, lambda r: r.cpu_s):.1f}",
                                    f"{median_of(runs, lambda r: r.checkpoints):.0f}")
            else:
                cells[side.name] = (side.skipped.get(s.name, "failed"), "-", "-", "-")
        row.append(cells["weir"][0])
        if flink:
            row.append(cells["Flink"][0])
            w, f = weir.runs.get(s.name), flink.runs.get(s.name)
            row.append(f"{rate_of(s, w) / rate_of(s, f):.1f}x" if w and f else "-")
            paired = paired_by_round(w, f) if w and f else []  # weir's speed against Flink's
            row.append(f"{statistics.median(paired):.1f}x" if paired else "-")
        for i in (1, 2, 3):
            row += [cells[side.name][i] for side in sides]
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


def checkpoint_comparisons(all_scenarios):
    """(row without checkpoints, the same row with them), for each row with checkpoints."""
    by_key = {(s.job, s.parallelism, s.checkpoint_ms): s for s in all_scenarios}
    return [(by_key[(s.job, s.parallelism, 0)], s) for s in all_scenarios
            if s.checkpoint_ms != 0 and (s.job, s.parallelism, 0) in by_key]


def scaling_comparisons(all_scenarios):
    """(row at p=1, the same row at p=2), for each row at p=2."""
    by_key = {(s.job, s.parallelism, s.checkpoint_ms): s for s in all_scenarios}
    return [(by_key[(s.job, 1, s.checkpoint_ms)], s) for s in all_scenarios
            if s.parallelism == 2 and (s.job, 1, s.checkpoint_ms) in by_key]


def print_costs(all_scenarios, sides):
    """Checkpoint cost (throughput lost against no checkpoints) and p=2 against p=1 scaling."""
    lines = []
    for base, s in checkpoint_comparisons(all_scenarios):
        parts = []
        for side in sides:
            b, c = side.runs.get(base.name), side.runs.get(s.name)
            if b and c:
                part = f"{side.name} {(1 - rate_of(s, c) / rate_of(base, b)) * 100:+.1f}%"
                # Each round's cost: 1 - the runtime without checkpoints over the runtime with them.
                costs = [1 - x for x in paired_by_round(c, b)]
                if len(costs) >= 2:
                    part += f" (by round {statistics.median(costs) * 100:+.1f}%)"
                parts.append(part)
        if parts:
            lines.append(f"  checkpoint cost, {s.name.split(' | ')[0]}, p={s.parallelism}, "
                         f"every {s.checkpoint_ms} ms: " + ", ".join(parts))
    for one, s in scaling_comparisons(all_scenarios):
        parts = []
        for side in sides:
            a, b = side.runs.get(one.name), side.runs.get(s.name)
            if a and b:
                part = f"{side.name} {rate_of(s, b) / rate_of(one, a):.2f}x"
                speedups = paired_by_round(b, a)  # p=1's runtime over p=2's, each round
                if len(speedups) >= 2:
                    part += f" (by round {statistics.median(speedups):.2f}x)"
                parts.append(part)
        if parts:
            cp = f"every {s.checkpoint_ms} ms" if s.checkpoint_ms else "no checkpoints"
            lines.append(f"  p=2 against p=1, {s.name.split(' | ')[0]}, {cp}: " + ", ".join(parts))
    if lines:
        print("\n(checkpoint cost: throughput lost against the same job without checkpoints; a plus is a loss;"
              " by round: the median of each round's figure, from the two rows' runs of that round)")
        print("\n".join(lines))


def run_back_to_back(side, all_scenarios, args, tmp, index):
    """weir's own figures once more, each from pairs of runs taking turns right after each other:
    the rows of a checkpoint cost, and of p=2 against p=1. Within the rounds the two rows of such
    a figure run a Flink run apart (seconds to a minute), across which a virtual machine's speed
    drifts by more than the few per cent a checkpoint costs. Returns {(a, b): [b's runtime over
    a's, each pair]} (failed runs leave their pair out)."""
    ratios = {}
    for a, b in checkpoint_comparisons(all_scenarios) + scaling_comparisons(all_scenarios):
        if a.name in side.skipped or b.name in side.skipped:
            continue
        pair_ratios = []
        for i in range(args.weir_pairs):
            runs = {}
            for s in ((a, b) if i % 2 == 0 else (b, a)):  # each first in every other pair
                index += 1
                runs[s.name] = execute(side, s, args, tmp, index)
            if runs[a.name] and runs[b.name]:
                pair_ratios.append(runs[b.name].runtime_ms / max(runs[a.name].runtime_ms, 1))
        print(f"  {side.name:5} back to back, {a.name} against {b.name}: "
              + " ".join(f"{x:.3f}" for x in pair_ratios), flush=True)
        ratios[(a.name, b.name)] = pair_ratios
    return ratios


def print_back_to_back(all_scenarios, side, ratios):
    """The checkpoint costs and p=2 against p=1 of run_back_to_back: the median of the pairs'
    figures and their range."""
    lines = []
    for base, s in checkpoint_comparisons(all_scenarios):
        r = ratios.get((base.name, s.name))
        if r:
            costs = sorted(1 - 1 / x for x in r)  # 1 - runtime without over runtime with
            lines.append(f"  checkpoint cost, {s.name.split(' | ')[0]}, p={s.parallelism}, every {s.checkpoint_ms} ms: "
                         f"{side.name} {statistics.median(costs) * 100:+.1f}% (pairs from {costs[0] * 100:+.1f}% "
                         f"to {costs[-1] * 100:+.1f}%, {len(costs)} pairs)")
    for one, s in scaling_comparisons(all_scenarios):
        r = ratios.get((one.name, s.name))
        if r:
            speedups = sorted(1 / x for x in r)  # p=1's runtime over p=2's
            cp = f"every {s.checkpoint_ms} ms" if s.checkpoint_ms else "no checkpoints"
            lines.append(f"  p=2 against p=1, {s.name.split(' | ')[0]}, {cp}: {side.name} "
                         f"{statistics.median(speedups):.2f}x (pairs from {speedups[0]:.2f}x to {speedups[-1]:.2f}x, "
                         f"{len(speedups)} pairs)")
    if lines:
        print(f"\n(back to back: {side.name}'s two rows of each figure run in pairs right after each other, "
              "after the rounds, which of the two runs first swapped every pair; the median of the pairs' figures)")
        print("\n".join(lines))


# Rounds of one row whose runtimes spread wider than this share of their median are listed.
SPREAD_NOTED = 0.15
# Runs of each of core_share_probe's loops, before the rounds and after the last run.
CORE_PROBE_RUNS = 8


def print_noise(all_scenarios, sides, cores=()):
    """What the medians hide: the host's steal time during the runs, how steadily the cores ran
    wide code before and after them (`cores`: (when, probe_cores result) pairs), and the rows
    whose rounds disagree (a median of rounds that spread widely says little about a small
    difference)."""
    lines = [cores_line(when, ranges) for when, ranges in cores]
    for side in sides:
        steals = [r.steal_pct for runs in side.runs.values() for r in runs if r.steal_pct is not None]
        if steals:
            lines.append(f"  steal, {side.name}'s runs: median {statistics.median(steals):.1f}%, "
                         f"max {max(steals):.1f}% of the machine's CPU time")
    for side in sides:
        for p in sorted({s.parallelism for s in all_scenarios}):
            idles = [r.idle_pct for s in all_scenarios if s.parallelism == p
                     for r in side.runs.get(s.name, []) if r.idle_pct is not None]
            if idles:
                lines.append(f"  cores idle, {side.name}'s runs at p={p}: median {statistics.median(idles):.1f}%, "
                             f"max {max(idles):.1f}% of the machine's CPU time")
    for s in all_scenarios:
        for side in sides:
            runs = side.runs.get(s.name, [])
            if len(runs) < 2:
                continue
            times = [r.runtime_ms for r in runs]
            spread = (max(times) - min(times)) / max(statistics.median(times), 1)
            if spread > SPREAD_NOTED:
                lines.append(f"  spread, {side.name} {s.name}: rounds from {min(times)} to {max(times)} ms "
                             f"({spread * 100:.0f}% of the median)")
    if len(sides) > 1:
        for s in all_scenarios:
            paired = paired_by_round(sides[0].runs.get(s.name, []), sides[1].runs.get(s.name, []))
            if len(paired) >= 2:
                lines.append(f"  by round, weir/Flink {s.name}: " + " ".join(f"{x:.1f}x" for x in paired)
                             + f" (median {statistics.median(paired):.1f}x, from {min(paired):.1f}x"
                             f" to {max(paired):.1f}x)")
    if lines:
        print(f"\n(steal: time the host ran other work on this machine's cores, from /proc/stat; cores: "
              f"build/bin/core_share_probe's two loops of fixed work, pinned to each CPU in turn, a wide one "
              f"(six independent chains, several instructions a cycle, as weir's task threads run) and a "
              f"narrow one (one chain): the wide loop slower at some moments while the narrow one holds "
              f"steady is other work on the same physical core, which slows wide code most and which steal "
              f"does not show; cores idle: time no thread ran on a core, which a job with more busy "
              f"threads than cores loses to its hand-offs or to where the kernel put its threads; spread: rows "
              f"whose rounds differ by more than {SPREAD_NOTED * 100:.0f}% of their median; by round: "
              f"weir's speed against Flink's in each round, whose two runs of a row are back to back)")
        print("\n".join(lines))


def probe_cores(build):
    """The ranges of core_share_probe's wide and narrow loops on this machine now, as
    {"wide": (min, median, max), "narrow": ...} in ms, or a string saying why not."""
    probe = os.path.join(build, "bin", "core_share_probe")
    if not os.access(probe, os.X_OK):
        return f"no {probe}"
    done = subprocess.run([probe, "--runs", str(CORE_PROBE_RUNS)], capture_output=True, text=True)
    ranges = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 4:
            ranges[fields[0]] = tuple(float(x) for x in fields[1:])
    if done.returncode != 0 or set(ranges) != {"wide", "narrow"}:
        return f"core_share_probe failed: {done.stderr.strip() or done.stdout.strip()}"
    return ranges


def cores_line(when, ranges):
    if isinstance(ranges, str):
        return f"  cores, {when}: not measured ({ranges})"
    (wmin, wmed, wmax), (nmin, nmed, nmax) = ranges["wide"], ranges["narrow"]
    return (f"  cores, {when}: the wide loop {wmin:.0f} to {wmax:.0f} ms (median {wmed:.0f}, "
            f"+{(wmax - wmin) / wmin * 100:.0f}%), the narrow one {nmin:.0f} to {nmax:.0f} ms "
            f"(median {nmed:.0f}, +{(nmax - nmin) / nmin * 100:.0f}%), {CORE_PROBE_RUNS} runs each")


def machine_line():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({model}), {mem:.0f} GiB, Linux {platform.release()}"


def main():
    ap = argparse.ArgumentParser(prog="tests/bench/vs-flink/run.sh [build-dir]",
                                 description="weir against Flink, side by side")
    # Set by run.sh:
    ap.add_argument("--build", help=argparse.SUPPRESS)
    ap.add_argument("--flink-home", help=argparse.SUPPRESS)  # absent: weir alone
    ap.add_argument("--flink-classes", help=argparse.SUPPRESS)
    ap.add_argument("--java", default="java", help=argparse.SUPPRESS)
    ap.add_argument("--no-flink-reason", default="", help=argparse.SUPPRESS)
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)  # validate, run nothing
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", type=int, default=50_000_000, help="keyed sum: records")
    ap.add_argument("--many-keys", type=int, default=100_000, help="keyed sum with many keys: keys")
    ap.add_argument("--rocksdb-count", type=int, default=ROCKSDB_COUNT_DEFAULT,
                    help="keyed sum with many keys on rocksdb: records")
    ap.add_argument("--text-mb", type=float, default=128, help="word count: MB of Zipf text")
    ap.add_argument("--text-cache", default=os.environ.get("WEIR_BENCH_CACHE", "/tmp/weir-bench"))
    ap.add_argument("--jobs", type=csv_list("--jobs", str), default=["keyed-sum", "many-keys", "word-count"])
    ap.add_argument("--parallelism", type=csv_list("--parallelism", int), default=[1, 2])
    ap.add_argument("--checkpoints", type=csv_list("--checkpoints", checkpoint_ms), default=[0, 100, 1000],
                    help="intervals: none, 100ms, 1s, ...")
    ap.add_argument("--csv", help="also write every run to this CSV file")
    ap.add_argument("--weir-pairs", type=int, default=5,
                    help="after the rounds, weir's checkpoint costs and p=2 against p=1 again from this "
                         "many pairs of runs taking turns (0: none)")
    args = ap.parse_args()
    bad = [j for j in args.jobs if j not in JOBS]
    if bad:
        ap.error(f"--jobs: unknown job '{bad[0]}' ({', '.join(JOBS)})")
    if min(args.rounds, args.count, args.many_keys, args.rocksdb_count) < 1 or args.text_mb <= 0:
        ap.error("--rounds, --count, --many-keys, --rocksdb-count and --text-mb must be positive")
    if args.weir_pairs < 0:
        ap.error("--weir-pairs must be 0 (none) or more")
    if any(p < 1 for p in args.parallelism):
        ap.error("--parallelism: every value must be at least 1")
    if args.check_args:
        return
    if not args.build:
        ap.error("--build DIR is required")

    tmp = tempfile.mkdtemp(prefix="weir-vs-flink-")
    args.keep_logs = tempfile.mkdtemp(prefix="weir-vs-flink-logs-")
    try:
        text_words = 0
        if "word-count" in args.jobs:
            files = max(args.parallelism)
            args.text_dir = os.path.join(args.text_cache, f"zipf-{args.text_mb:g}mb-{files}files-seed1")
            if not os.path.exists(args.text_dir + ".words"):
                print(f"generating {args.text_mb:g} MB of Zipf text in {args.text_dir} ...", flush=True)
                subprocess.run([sys.executable, os.path.join(HERE, "zipf_text.py"), args.text_dir,
                                "--mb", str(args.text_mb), "--files", str(files)], check=True)
            text_words = int(open(args.text_dir + ".words").read())

        sides = [Side("weir")]
        sides[0].impl = Weir(args.build, tmp)
        if args.flink_home:
            sides.append(Side("Flink"))
            sides[1].impl = Flink(args.java, args.flink_home, args.flink_classes)
        for side in sides:
            side.failures = 0
        todo = scenarios(args, text_words)
        for s in todo:
            for side in sides:
                why = side.impl.skip_reason(s)
                if why:
                    side.skipped[s.name] = why

        started = time.strftime("%Y-%m-%d %H:%M")
        load_before = os.getloadavg()[0]
        print(f"weir against Flink: {machine_line()}, {started}, load average {load_before:.1f}")
        if len(sides) == 1:
            print(f"Flink is not measured: {args.no_flink_reason or 'not installed'}; weir alone")
        work = []
        if "keyed-sum" in args.jobs or "many-keys" in args.jobs:
            work.append(f"keyed sum {args.count:,} records")
        if "many-keys-rocksdb" in args.jobs:
            work.append(f"keyed sum on rocksdb {args.rocksdb_count:,} records")
        if text_words:
            work.append(f"word count {args.text_mb:g} MB, {text_words:,} words in {args.text_dir}")
        print(f"{args.rounds} rounds, sides alternating; " + "; ".join(work))
        cores = [("before the runs", probe_cores(args.build))]
        print(cores_line(*cores[0]).strip(), flush=True)
        csv = open(args.csv, "w") if args.csv else None
        if csv:
            csv.write("side,job,parallelism,checkpoint_ms,work,runtime_ms,wall_s,max_rss_mb,cpu_s,checkpoints,"
                      "steal_pct,idle_pct,round\n")
        index = 0
        for r in range(args.rounds):
            print(f"round {r + 1} of {args.rounds}", flush=True)
            order = sides if r % 2 == 0 else list(reversed(sides))
            for s in todo:
                for side in order:
                    if s.name in side.skipped:
                        continue
                    index += 1
                    run_one(side, s, args, tmp, index, csv, r)
        back_to_back = {}
        if args.weir_pairs:
            print(f"weir back to back, {args.weir_pairs} pairs of each figure (runtime of the second row over the first's)",
                  flush=True)
            back_to_back = run_back_to_back(sides[0], todo, args, tmp, index)
        cores.append(("after them", probe_cores(args.build)))
        print(f"\nMedians of {args.rounds} rounds (M = million per second of job runtime; RSS and CPU "
              f"of the whole process; chk = checkpoints completed), load average "
              f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after:\n")
        print_table(todo, sides)
        print_costs(todo, sides)
        print_back_to_back(todo, sides[0], back_to_back)
        print_noise(todo, sides, cores)
        if "keyed-sum" in args.jobs and not sides[0].impl.has_keys:
            print("\nnote: weir's number_sum has no --keys yet: its 2-key rows use its parity key "
                  "(n mod 2, the same keys)")
        failures = sum(side.failures for side in sides)
        if failures:
            fail(f"{failures} run(s) failed; their logs are in {args.keep_logs}")
        shutil.rmtree(args.keep_logs, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
