#!/usr/bin/env python3
"""Summarizes a callgrind profile (Ir) by function: instructions per unit of work (a record, a
word) and the share of the whole, exclusive (the function's own code, with what the compiler
inlined into it) and inclusive (with its callees). Used by tests/bench/vs-flink/profile.py.

    callgrind_top.py callgrind.out UNITS [--top N] [--inclusive NAME ...]

UNITS is the number of records or words the profiled job processed. --inclusive lists the
inclusive cost of the functions whose names contain NAME (e.g. 'RecordWriterOutput<long>::Collect').
"""
import argparse
import re
import sys
from collections import defaultdict

def by_function(path):
    """(total, {function: self instructions}, {function: inclusive instructions},
    {function: times called}), read from
    callgrind's output file: a function's cost lines are its own instructions (including what
    was inlined into it), the cost line after a `calls=` line is the inclusive cost of that
    call. Calls of a function to itself are not added again."""
    names, self_cost, incl_cost, calls = {}, defaultdict(int), defaultdict(int), defaultdict(int)
    total, fn, callee, after_calls = 0, None, None, False

    def name_of(value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), value)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = short(name_of(line[3:]))
            elif line.startswith("cfn="):
                callee = short(name_of(line[4:]))
            elif line.startswith("calls="):
                after_calls = True
                calls[callee] += int(line[6:].split()[0])
            elif line and (line[0].isdigit() or line[0] in "+-*") and fn is not None:
                cost = int(line.split()[-1])
                if after_calls:
                    if callee != fn:
                        incl_cost[fn] += cost
                    after_calls = False
                else:
                    self_cost[fn] += cost
                    incl_cost[fn] += cost
                    total += cost
    return total, self_cost, incl_cost, calls


def short(function):
    """The function's name without its parameter list and long template arguments."""
    name = function.replace("non-virtual thunk to ", "")
    name = re.sub(r"\(anonymous namespace\)::", "", name)
    name = re.sub(r"\(lambda\)|\{lambda\([^)]*\)#\d+\}", "lambda", name)
    # Drop template arguments nested deeper than one level (for std::, all of them).
    keep_depth = 0 if name.startswith("std::") else 1
    depth, kept = 0, []
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 1:
                kept.append(ch)
            if depth == keep_depth + 1:
                kept.append("…")
            continue
        if ch == ">":
            depth -= 1
            if depth == 0:
                kept.append(ch)
            continue
        if depth <= keep_depth:
            kept.append(ch)
    name = "".join(kept)
    paren = name.find("(")
    return name[:paren] if paren > 0 else name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("units", type=float)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--inclusive", nargs="*", default=[])
    a = ap.parse_args()
    total, own, incl, _ = by_function(a.profile)
    print(f"  total {total:,} instructions, {total / a.units:.0f} per unit")
    print(f"  {'self %':>7} {'per unit':>9}  function (exclusive)")
    for name, cost in sorted(own.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"  {cost / total * 100:6.1f}% {cost / a.units:9.1f}  {name}")
    if a.inclusive:
        print(f"  {'incl %':>7} {'per unit':>9}  function (inclusive)")
        for want in a.inclusive:
            matches = [(n, c) for n, c in incl.items() if want in n]
            if not matches:
                print(f"  {'-':>7} {'-':>9}  {want}: not in the profile")
            for name, cost in sorted(matches, key=lambda kv: -kv[1])[:3]:
                print(f"  {cost / total * 100:6.1f}% {cost / a.units:9.1f}  {name}")


if __name__ == "__main__":
    sys.exit(main())
