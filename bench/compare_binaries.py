#!/usr/bin/env python3
"""Old vs new: two batchdyn_bench binaries run in turn on one filter, each row's best time.

    python3 bench/compare_binaries.py OLD NEW ROUNDS FILTER [REPETITIONS]

Runs `BINARY --benchmark_filter=FILTER --benchmark_repetitions=REPETITIONS` (default 3) on OLD,
then on NEW, ROUNDS times, and prints per benchmark the smallest `ns_per_env` each binary
reached and old / new. Alternating the binaries spreads a shared host's drift over both; the
minimum is the least disturbed run. Only rows that report `ns_per_env` are compared.
"""
import collections
import json
import subprocess
import sys


def best_times(binary, benchmark_filter, repetitions, best):
    out = subprocess.run([binary, "--benchmark_filter=" + benchmark_filter, "--benchmark_repetitions=" + repetitions,
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    for row in json.loads(out)["benchmarks"]:
        if row.get("run_type") != "iteration" or "ns_per_env" not in row:
            continue
        name = row["run_name"]
        best[name] = min(best.get(name, float("inf")), row["ns_per_env"])


def main(argv):
    if len(argv) not in (5, 6):
        sys.exit(__doc__)
    old, new, rounds, benchmark_filter = argv[1], argv[2], int(argv[3]), argv[4]
    repetitions = argv[5] if len(argv) == 6 else "3"
    best = {old: collections.OrderedDict(), new: collections.OrderedDict()}
    for _ in range(rounds):
        for binary in (old, new):
            best_times(binary, benchmark_filter, repetitions, best[binary])
    print(f"{'benchmark':90s} {'old ns':>10s} {'new ns':>10s} {'old/new':>7s}")
    for name, o in best[old].items():
        n = best[new].get(name, float("nan"))
        print(f"{name[:90]:90s} {o:10.1f} {n:10.1f} {o / n:7.3f}")


if __name__ == "__main__":
    main(sys.argv)
