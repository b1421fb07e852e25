#!/usr/bin/env python3
"""Writes a reproducible English-like text whose word frequencies follow Zipf's law, for the
word count benchmarks: the same (size, files, seed) always gives the same bytes.

    zipf_text.py DIR --mb 128 [--files 2] [--vocabulary 100000] [--exponent 1.0] [--seed 1]

DIR gets part-0.txt .. part-<files-1>.txt of about equal size (every source subtask of a
parallel job has a file to read) and DIR.words, the number of words in all of them (runs of
ASCII letters and digits, as word_count splits them). Lines hold 8 to 16 words; the first
word of a line is capitalized and the line ends with a full stop, so tokenizers lower-case
and skip punctuation. Prints DIR and the word count. Exit 2 on bad arguments.
"""
import argparse
import itertools
import os
import random
import string
import sys


def vocabulary(size, rng):
    """Distinct lower-case words of 1 to 12 letters; short words are the frequent ones."""
    words, seen = [], set()
    while len(words) < size:
        rank = len(words)
        length = min(12, 1 + int(rng.expovariate(1.0) * (2 + rank ** 0.25)))
        w = "".join(rng.choice(string.ascii_lowercase) for _ in range(length))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def write_file(path, target_bytes, words, cum_weights, rng):
    count, written = 0, 0
    with open(path, "w", encoding="ascii") as f:
        while written < target_bytes:
            lengths = [rng.randint(8, 16) for _ in range(2000)]
            picked = rng.choices(words, cum_weights=cum_weights, k=sum(lengths))
            lines, i = [], 0
            for n in lengths:
                line = picked[i:i + n]
                i += n
                lines.append(line[0].capitalize() + " " + " ".join(line[1:]) + ".\n")
            chunk = "".join(lines)
            f.write(chunk)
            written += len(chunk)
            count += i
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--mb", type=float, default=128, help="total size in MB (10^6 bytes)")
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--vocabulary", type=int, default=100000)
    ap.add_argument("--exponent", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.mb <= 0 or a.files < 1 or a.vocabulary < 1 or a.exponent <= 0:
        ap.error("--mb, --files, --vocabulary and --exponent must be positive")
    rng = random.Random(a.seed)
    words = vocabulary(a.vocabulary, rng)
    cum_weights = list(itertools.accumulate(1.0 / (r + 1) ** a.exponent for r in range(len(words))))
    os.makedirs(a.dir, exist_ok=True)
    total = 0
    for i in range(a.files):
        total += write_file(os.path.join(a.dir, f"part-{i}.txt"), a.mb * 1e6 / a.files, words, cum_weights, rng)
    with open(a.dir.rstrip("/") + ".words", "w") as f:
        f.write(f"{total}\n")
    print(f"{a.dir}: {total} words")


if __name__ == "__main__":
    sys.exit(main())
