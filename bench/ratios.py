#!/usr/bin/env python3
"""Ratios measured within one Google Benchmark run of batchdyn_bench (DESIGN.md §5).

    ./build.sh bench --benchmark_filter='Simd|Scalar' \
        --benchmark_out=bench.json --benchmark_out_format=json
    python3 bench/ratios.py bench.json

Prints, per model, N and precision: SIMD vs W = 1 speed-up (1 thread), 2 threads vs 1 (SIMD),
env-evaluations/s per core, ns per environment, % of peak and workspace bytes per environment.
"""
import json
import re
import sys
from collections import defaultdict


def main(path):
    runs = json.load(open(path))["benchmarks"]
    rate = {}
    extra = {}
    pattern = re.compile(r"(\w+)(Simd|Scalar)<(\w+)>/([\w:]+)/N:(\d+)/threads:(\d+)")
    for r in runs:
        if r.get("run_type", "iteration") != "iteration" or "error_occurred" in r:
            continue
        m = pattern.match(r["name"])
        if not m:
            continue
        kind, lanes, precision, model, n, threads = m.groups()
        key = (kind, lanes, precision, model, int(n), int(threads))
        rate[key] = r["items_per_second"]
        extra[key] = r
    rows = defaultdict(dict)
    for (kind, lanes, precision, model, n, threads), value in rate.items():
        rows[(kind, model, n, precision)][(lanes, threads)] = value
    print(f"{'kernel':6} {'model':16} {'N':>6} {'prec':6} {'SIMD/W=1':>9} {'2T/1T':>6} "
          f"{'env/s/core':>11} {'ns/env':>8} {'%peak':>6} {'B/env':>7}")
    for (kind, model, n, precision), r in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3], kv[0][2])):
        simd1, scalar1, simd2 = r.get(("Simd", 1)), r.get(("Scalar", 1)), r.get(("Simd", 2))
        e = extra.get((kind, "Simd", precision, model, n, 1), {})
        speedup = f"{simd1 / scalar1:9.2f}" if simd1 and scalar1 else f"{'-':>9}"
        threads = f"{simd2 / simd1:6.2f}" if simd1 and simd2 else f"{'-':>6}"
        print(f"{kind:6} {model:16} {n:6d} {precision:6} {speedup} {threads} {e.get('env_per_s_per_core', 0):11.0f} "
              f"{e.get('ns_per_env', 0):8.0f} {e.get('pct_peak', 0):6.1f} {e.get('bytes_per_env', 0):7.0f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench.json")
