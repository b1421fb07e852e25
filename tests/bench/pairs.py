#!/usr/bin/env python3
"""Two command lines measured in pairs taking turns: the way to tell a change of a few per cent
from a virtual machine whose speed drifts by more than that within minutes.

    tests/bench/pairs.py [--pairs N] [--warmup W] [--env-a K=V]... [--env-b K=V]...
                         [--label-a A] [--label-b B] --a 'COMMAND A' --b 'COMMAND B'

Each pair runs A and B once each, back to back, A first in the even pairs and B first in the odd
ones (so that neither always runs on a machine the other has just warmed). A run's time is its
"Job Runtime: N ms" line (what weir prints, and Flink's client too) where its output has one,
else its wall time. Prints every pair, then the median of each side, the median and range of
the pairs' ratios B/A, how many pairs B was the faster in, the host's steal time, and the
share of each side's runs during which the cores stood idle (a job with more busy threads than
cores that leaves them idle lost that time to its hand-offs or to where the kernel put its
threads). A ratio taken within a pair cancels the drift that comparing two medians taken
minutes apart keeps.

Examples, from the repository's root after scripts/build.sh:

    # p=2 against p=1 with many keys (a ratio of 0.59 is a speed-up of 1.7)
    tests/bench/pairs.py --pairs 8 --label-a p1 --label-b p2 \\
      --a 'build/bin/weir-run -p 1 build/examples/number_sum.so --count 50000000 --keys 100000 --sink discard' \\
      --b 'build/bin/weir-run -p 2 build/examples/number_sum.so --count 50000000 --keys 100000 --sink discard'
    # what checkpoints every 100 ms cost
    tests/bench/pairs.py --a 'build/bin/weir-run build/examples/number_sum.so --count 50000000 --sink discard' \\
      --b 'build/bin/weir-run -D execution.checkpointing.interval=100ms build/examples/number_sum.so --count 50000000 --sink discard'

Prints figures; not a pass/fail test. Exit codes: 0 figures printed; 1 a run failed (its
output is printed); 2 bad arguments.
"""
import argparse
import os
import re
import shlex
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vs-flink"))
from harness import machine_cpu_times, measure, share_percent  # noqa: E402


def env_pair(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    return key, value


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="command A, one shell-quoted string")
    p.add_argument("--b", required=True, help="command B, one shell-quoted string")
    p.add_argument("--pairs", type=int, default=6, help="pairs to measure [6]")
    p.add_argument("--warmup", type=int, default=1, help="runs of each before the pairs, not counted [1]")
    p.add_argument("--env-a", type=env_pair, action="append", default=[], help="KEY=VALUE for A's runs only")
    p.add_argument("--env-b", type=env_pair, action="append", default=[], help="KEY=VALUE for B's runs only")
    p.add_argument("--label-a", default="A")
    p.add_argument("--label-b", default="B")
    args = p.parse_args(argv)
    if args.pairs < 1 or args.warmup < 0:
        p.error("--pairs must be at least 1 and --warmup at least 0")
    for name in ("a", "b"):
        try:
            words = shlex.split(getattr(args, name))
        except ValueError as e:
            p.error(f"--{name}: {e}")
        if not words:
            p.error(f"--{name} is empty")
        setattr(args, name, words)
    return args


def run_ms(cmd, env, log_dir):
    """The run's time in ms: its 'Job Runtime' line, else its wall time; exits 1 on a failure."""
    log_path = os.path.join(log_dir, "run.log")
    code, wall_s, _, _, _ = measure(cmd, log_path, env)
    with open(log_path, errors="replace") as f:
        output = f.read()
    if code != 0:
        sys.stderr.write(output[-4000:])
        print(f"pairs: '{shlex.join(cmd)}' exited with {code} (its output is above)", file=sys.stderr)
        sys.exit(1)
    m = re.search(r"^Job Runtime: (\d+) ms$", output, re.M)
    return (float(m.group(1)), "job runtime") if m else (wall_s * 1000.0, "wall time")


def main(argv):
    args = parse_args(argv)
    sides = {"a": (args.a, dict(os.environ, **dict(args.env_a)), args.label_a),
             "b": (args.b, dict(os.environ, **dict(args.env_b)), args.label_b)}
    for key in ("a", "b"):
        cmd, _, label = sides[key]
        print(f"{label}: {shlex.join(cmd)}")
        for k, v in (args.env_a if key == "a" else args.env_b):
            print(f"  with {k}={v}")
    times = {"a": [], "b": []}
    ratios = []
    steals = []
    idles = {"a": [], "b": []}
    what = set()
    with tempfile.TemporaryDirectory(prefix="weir-pairs-") as log_dir:
        for _ in range(args.warmup):
            for key in ("a", "b"):
                run_ms(sides[key][0], sides[key][1], log_dir)
        for i in range(args.pairs):
            order = ("a", "b") if i % 2 == 0 else ("b", "a")
            before = machine_cpu_times()
            pair = {}
            for key in order:
                started = machine_cpu_times()
                pair[key], kind = run_ms(sides[key][0], sides[key][1], log_dir)
                what.add(kind)
                idle = share_percent(started, machine_cpu_times(), "idle")
                if idle is not None:
                    idles[key].append(idle)
            steal = share_percent(before, machine_cpu_times(), "steal")
            if steal is not None:
                steals.append(steal)
            ratio = pair["b"] / pair["a"] if pair["a"] > 0 else float("inf")
            for key in ("a", "b"):
                times[key].append(pair[key])
            ratios.append(ratio)
            print(f"pair {i + 1}: {args.label_a} {pair['a']:.0f} ms, {args.label_b} {pair['b']:.0f} ms, "
                  f"{args.label_b}/{args.label_a} {ratio:.3f}"
                  + ("" if steal is None else f", steal {steal:.1f}%"), flush=True)
    median_ratio = statistics.median(ratios)
    faster = sum(1 for r in ratios if r < 1)
    print(f"\n{args.pairs} pairs ({' and '.join(sorted(what))}): "
          f"{args.label_a} median {statistics.median(times['a']):.0f} ms, "
          f"{args.label_b} median {statistics.median(times['b']):.0f} ms")
    print(f"{args.label_b}/{args.label_a}: median {median_ratio:.3f} (range {min(ratios):.3f} to {max(ratios):.3f}); "
          f"{args.label_b} faster in {faster} of {args.pairs} pairs; "
          f"speed-up {args.label_a}/{args.label_b} {1 / median_ratio:.2f}x")
    if steals:
        print(f"steal: median {statistics.median(steals):.1f}%, max {max(steals):.1f}% of the machine's CPU time")
    if idles["a"] and idles["b"]:
        print(f"cores idle: {args.label_a} median {statistics.median(idles['a']):.1f}%, "
              f"{args.label_b} median {statistics.median(idles['b']):.1f}% of the machine's CPU time while they ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
