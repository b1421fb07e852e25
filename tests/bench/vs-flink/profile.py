#!/usr/bin/env python3
"""Profiles weir's hot paths: where the instructions of a record go (callgrind: deterministic,
so the figures hold on a loaded machine too) and how the task threads share the cores (native
runs: CPU seconds against wall time, context switches). The evidence behind PROFILE.md.

    tests/bench/vs-flink/profile.py [--build DIR] [--only NAME,...] [--keep DIR]

Sections (NAME): keyed-sum (number_sum p=1: serialization, key hashing, state access), word-count
(word_count p=1: tokenizing and strings), checkpoint (keyed_state p=1, 100 k keys, checkpoints
every 100 ms: the synchronous part), threads (native: number_sum with and without checkpoints,
buffer sizes, keyed_state and word_count at p=1 and p=2). Uses valgrind's callgrind (hardware
counters are not available on every machine, a VM's included). Prints figures; not a test.
Exits 2 on bad arguments, 1 when a profiled job fails.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_top import by_function  # noqa: E402
from harness import free_port, measure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Profiler:
    def __init__(self, build, tmp, keep):
        self.run_bin = os.path.join(build, "bin", "weir-run")
        self.examples = os.path.join(build, "examples")
        self.tmp = tmp
        self.keep = keep

    def job(self, so, *args, p=1, conf=()):
        cmd = [self.run_bin, "-p", str(p), "-D", f"rest.port={free_port()}"]
        for kv in conf:
            cmd += ["-D", kv]
        return cmd + [os.path.join(self.examples, so)] + list(args)

    def callgrind(self, name, cmd):
        out = os.path.join(self.keep or self.tmp, f"callgrind.{name}.out")
        log = os.path.join(self.tmp, f"{name}.log")
        code = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                              stdout=open(log, "w"), stderr=subprocess.STDOUT).returncode
        if code != 0:
            sys.exit(f"profile: '{name}' failed (exit {code}); log:\n{open(log).read()[-2000:]}")
        return by_function(out)

    def native(self, cmd):
        log = os.path.join(self.tmp, "native.log")
        code, wall, _, cpu, usage = measure(cmd, log)
        if code != 0:
            sys.exit(f"profile: {' '.join(cmd)} failed (exit {code}):\n{open(log).read()[-2000:]}")
        text = open(log).read()
        runtime = next((int(line.split()[2]) for line in text.splitlines() if line.startswith("Job Runtime:")), 0)
        # Voluntary context switches: a task thread that waits for a buffer, or for room in a
        # full channel, blocks; so this counts the hand-offs that went through a sleep.
        return runtime, wall, cpu, usage.ru_nvcsw


def perf_sched_works():
    if not shutil.which("perf"):
        return False
    probe = subprocess.run(["perf", "sched", "record", "-o", os.devnull, "--", "true"], capture_output=True)
    return probe.returncode == 0


def sched_threads(prof, cmd):
    """Per busy thread of cmd (perf sched): ms running, ms asleep (blocked: waiting for a buffer,
    for room in a channel, for mail) and ms runnable but not running (other processes had the
    cores). Threads that ran under 5% of the wall time are left out."""
    data = os.path.join(prof.tmp, "sched.data")
    code = subprocess.run(["perf", "sched", "record", "-o", data, "--"] + cmd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if code != 0:
        return None
    hist = subprocess.run(["perf", "sched", "timehist", "-i", data], capture_output=True, text=True).stdout
    threads = {}
    for line in hist.splitlines():
        f = line.split()
        if len(f) < 6 or not f[2].startswith(os.path.basename(cmd[0])[:15] + "["):
            continue
        try:
            sleep, delay, run = float(f[3]), float(f[4]), float(f[5])
        except ValueError:
            continue
        t = threads.setdefault(f[2], [0.0, 0.0, 0.0])
        t[0] += run
        t[1] += sleep
        t[2] += delay
    busiest = max((t[0] for t in threads.values()), default=0)
    return sorted((t for t in threads.values() if t[0] > 0.05 * busiest), key=lambda t: -t[0])


def show(title, profile, units, unit, inclusive, top=14):
    total, own, incl, calls = profile
    print(f"\n## {title}\n")
    print(f"{total:,} instructions, {total / units:.0f} per {unit}")
    print(f"\n  self %  per {unit:<6} function (own instructions, with what was inlined into it)")
    for name, cost in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {cost / total * 100:5.1f}% {cost / units:9.1f}   {name}")
    print(f"\n  incl %  per {unit:<6} function (with its callees)")
    for want in inclusive:
        matches = sorted(((n, c) for n, c in incl.items() if want in n), key=lambda kv: -kv[1])
        for name, cost in matches[:1]:
            print(f"  {cost / total * 100:5.1f}% {cost / units:9.1f}   {name}  ({calls.get(name, 0):,} calls)")
        if not matches:
            print(f"      -         -   {want}: not in this profile")


def main():
    root = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
    ap = argparse.ArgumentParser(description="profiles of weir's hot paths")
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--only", default="keyed-sum,word-count,checkpoint,threads")
    ap.add_argument("--keep", help="keep the callgrind output files in this directory")
    a = ap.parse_args()
    sections = a.only.split(",")
    unknown = [s for s in sections if s not in ("keyed-sum", "word-count", "checkpoint", "threads")]
    if unknown:
        ap.error(f"--only: unknown section '{unknown[0]}'")
    if not shutil.which("valgrind") and set(sections) - {"threads"}:
        sys.exit("profile: valgrind is not installed (apt-get install -y valgrind)")
    for so in ("number_sum.so", "word_count.so", "keyed_state.so"):
        if not os.path.exists(os.path.join(a.build, "examples", so)):
            ap.error(f"{a.build}/examples/{so} is missing: build first")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="weir-profile-")
    try:
        prof = Profiler(a.build, tmp, a.keep)
        text = os.path.join(tmp, "text")
        subprocess.run([sys.executable, os.path.join(HERE, "zipf_text.py"), text, "--mb", "8", "--files", "1"],
                       check=True, stdout=subprocess.DEVNULL)
        words = int(open(text + ".words").read())
        print("# weir hot-path profiles (callgrind: instructions, Ir)")

        if "keyed-sum" in sections:
            n = 5_000_000
            show(f"keyed sum: number_sum p=1, {n:,} records, discarding sink, no checkpoints",
                 prof.callgrind("keyed-sum", prof.job("number_sum.so", "--count", str(n), "--sink", "discard")),
                 n, "record",
                 ["Task::RunSourceLoop", "Task::RunInputLoop", "SequenceSource::EmitNext",
                  "RecordWriterOutput<long>::Collect", "RecordWriterOutput<long>::Append",
                  "DataOutput::WriteFixed<long>", "RecordReader<long>::Process", "KeyedProcessOperator",
                  "ParitySum::ProcessElement", "HeapValueState<long, long>::Value",
                  "HeapValueState<long, long>::Update", "InputGate::PushData", "InputGate::Take"])

        if "word-count" in sections:
            show(f"word count: word_count p=1, 8 MB of Zipf text ({words:,} words), discarding sink",
                 prof.callgrind("word-count", prof.job("word_count.so", "--input", text, "--sink", "discard")),
                 words, "word",
                 ["Task::RunSourceLoop", "Task::RunInputLoop", "FileSource::EmitNext", "SplitWords",
                  "RecordWriterOutput<std::pair… >::Collect", "RecordWriterOutput<std::pair… >::Append",
                  "RecordReader<std::pair", "KeyGroupOf", "ReduceOperator",
                  "HeapValueState<std::__cxx11::basic_string…, std::pair… >::Value",
                  "HeapValueState<std::__cxx11::basic_string…, std::pair… >::Update",
                  "std::__cxx11::basic_string<…>::basic_string", "memcpy", "operator new", "malloc", "free",
                  "tolower", "isalnum", "_IO_getline", "memchr"], top=18)

        if "checkpoint" in sections:
            keys, n = 100_000, 3_000_000
            cp = os.path.join(tmp, "cp")
            profile = prof.callgrind("checkpoint", prof.job(
                "keyed_state.so", "--keys", str(keys), "--count", str(n),
                conf=["execution.checkpointing.interval=100ms", f"execution.checkpointing.dir={cp}"]))
            _, _, incl, calls = profile
            show(f"checkpoint: keyed_state p=1, {keys:,} keys, {n:,} records, checkpoints every 100 ms",
                 profile, n, "record",
                 ["Task::PerformCheckpoint", "HeapKeyedStateBackend<long>::Snapshot", "KeyedOperatorBase",
                  "CheckpointCoordinator", "WriteSnapshot", "EncodeSubtaskSnapshot", "Crc32c",
                  "LocalWritableFile::Append", "_M_default_append", "RecordReader<long>::Process"])
            taken = calls.get("weir::runtime::Task::PerformCheckpoint", 0)
            snap = [(nm, c) for nm, c in incl.items() if "HeapKeyedStateBackend<long>::Snapshot" in nm]
            if taken and snap:
                per = snap[0][1] / calls.get(snap[0][0], 1)
                print(f"\n  {taken} synchronous snapshots (PerformCheckpoint calls, all tasks); the keyed state's "
                      f"copy costs {per:,.0f} instructions each, {per / keys:.0f} per key")

        if "threads" in sections:
            print("\n## threads: native runs, best use of 2 cores is CPU/wall 2.0\n")
            print(f"  {'job':<50} {'runtime':>9} {'CPU s':>6} {'CPU/wall':>8} {'sleeps':>8}")
            cp = os.path.join(tmp, "cp-native")
            bigger = ["taskmanager.memory.segment-size=256kb"]
            every = ["execution.checkpointing.interval=100ms", f"execution.checkpointing.dir={cp}"]
            big_text = os.path.join(tmp, "text2")
            subprocess.run([sys.executable, os.path.join(HERE, "zipf_text.py"), big_text, "--mb", "64", "--files",
                            "2"], check=True, stdout=subprocess.DEVNULL)
            rows = [
                ("number_sum p=1, 100 M", prof.job("number_sum.so", "--count", "100000000", "--sink", "discard")),
                ("number_sum p=1, 100 M, 256 kb buffers", prof.job(
                    "number_sum.so", "--count", "100000000", "--sink", "discard", conf=bigger)),
                ("number_sum p=1, 100 M, checkpoints every 100 ms", prof.job(
                    "number_sum.so", "--count", "100000000", "--sink", "discard", conf=every)),
                ("number_sum p=2, 100 M", prof.job("number_sum.so", "--count", "100000000", "--sink", "discard",
                                                    p=2)),
                ("keyed_state p=1, 100 k keys, 50 M", prof.job("keyed_state.so", "--keys", "100000", "--count",
                                                               "50000000")),
                ("keyed_state p=2, 100 k keys, 50 M", prof.job("keyed_state.so", "--keys", "100000", "--count",
                                                               "50000000", p=2)),
                ("word_count p=1, 64 MB in 2 files", prof.job("word_count.so", "--input", big_text, "--sink",
                                                               "discard")),
                ("word_count p=2, 64 MB in 2 files", prof.job("word_count.so", "--input", big_text, "--sink",
                                                               "discard", p=2)),
            ]
            for label, cmd in rows:
                runtime, wall, cpu, sleeps = prof.native(cmd)
                print(f"  {label:<50} {runtime:>6} ms {cpu:6.2f} {cpu / wall:8.2f} {sleeps:8}", flush=True)
            print("\n  (runtime: the job's; CPU/wall: cores busy on average, of the whole process; sleeps: "
                  "voluntary context switches, i.e. a thread blocked waiting)")
            if perf_sched_works():
                print("\n  Where the task threads' time goes (perf sched; ms): run = on a core, sleep = blocked "
                      "(waiting for a buffer, for room in a channel, for mail), delay = runnable while other "
                      "processes had the cores")
                for label, cmd in rows[:1] + rows[4:6]:
                    threads = sched_threads(prof, cmd)
                    if threads:
                        parts = [f"run {r:.0f} sleep {s:.0f} delay {d:.0f}" for r, s, d in threads[:3]]
                        print(f"  {label:<38} " + " | ".join(parts), flush=True)
            else:
                print("\n  (perf sched is not available here: no per-thread breakdown)")
            print(f"\n  load average after: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
