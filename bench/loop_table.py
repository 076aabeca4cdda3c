#!/usr/bin/env python3
"""The closed-loop tables from one run of bench/batched_loops.cpp.

    ./build.sh bench --benchmark_filter='^Loops/' \
        --benchmark_out=loops.json --benchmark_out_format=json
    python3 bench/loop_table.py loops.json

Prints one Markdown row per model and precision: ns per environment of each solver (one
thread, N = 1024), the largest iteration count of the converged steps, and the ratios the
targets are stated in (all from the same run): LCABA 1 / ABA, dense / LCABA 1, proxLTL / LCABA
at 1 and 3 iterations (the target: LCABA >= 20x proxLTL), SIMD vs W = 1
(and as a fraction of W), the half-width lanes of an AVX-512 build vs W = 1 (where present),
LCABA 1's flops per environment and its share of the core's peak.

    python3 bench/loop_table.py loops.json --prox-ltl

prints instead the proxLTL comparison (docs/loops.md): ns per
environment of ABA, LCABA 1 / 3, proxLTL 1 / 3 and the dense solver, proxLTL / LCABA at 1 and 3
iterations, and the paper's LTL / LCABA ratio (lcaba-proxbbo Table II) where it has the model.
"""
import json
import re
import sys

COLUMNS = ["Aba", "Lcaba1", "Lcaba3", "ProxBbo1", "ProxBbo3", "LcabaConvergedStep", "ProxBboConvergedStep",
           "Lcaba1Scalar", "Dense", "ProxLtl1", "ProxLtl3"]
HEADER = ("| model | ABA | LCABA 1 | LCABA 3 | proxBBO 1 | proxBBO 3 | LCABA step (it) | proxBBO step (it) "
          "| LCABA 1, W=1 | dense | proxLTL 1 | proxLTL 3 | LCABA1/ABA | dense/LCABA1 | proxLTL1/LCABA1 | proxLTL3/LCABA3 "
          "| SIMD/W=1 | half-width/W=1 | LCABA 1 flops, % peak |")


# lcaba-proxbbo Table II, LTL / LCABA at 1 and 3 iterations (scalar Pinocchio, one robot).
PAPER_LTL_OVER_LCABA = {
    "hand_cube": (3.96 / 4.91, 5.21 / 6.28),
    "two_hands_cube": (9.37 / 7.87, 12.4 / 9.7),
    "humanoid_hands_cube": (21.4 / 14.6, 24.9 / 16.6),
    "humanoid_hands_cube_feet": (29.0 / 15.6, 33.5 / 18.2),
    "digit_feet": (23.1 / 9.96, 28.4 / 12.4),
    "two_digits_box": (142.6 / 23.5, 168 / 31.0),
}
PROX_LTL_HEADER = ("| model | ABA | LCABA 1 | LCABA 3 | proxLTL 1 | proxLTL 3 | dense | proxLTL1/LCABA1 | proxLTL3/LCABA3 "
                   "| paper LTL/LCABA 1, 3 |")


def prox_ltl_row(key, cols):
    cells = [f"{key[0]} {key[1]}"]
    for c in ("Aba", "Lcaba1", "Lcaba3", "ProxLtl1", "ProxLtl3", "Dense"):
        t = ns(cols.get(c))
        cells.append(f"{t:.0f}" if t else "")
    ratio = lambda a, b: f"{a / b:.1f}×" if a and b else ""
    cells.append(ratio(ns(cols.get("ProxLtl1")), ns(cols.get("Lcaba1"))))
    cells.append(ratio(ns(cols.get("ProxLtl3")), ns(cols.get("Lcaba3"))))
    paper = PAPER_LTL_OVER_LCABA.get(key[0])
    cells.append(f"{paper[0]:.1f}×, {paper[1]:.1f}×" if paper else "")
    return "| " + " | ".join(cells) + " |"


def main(path, prox_ltl=False):
    runs = json.load(open(path))["benchmarks"]
    pattern = re.compile(r"Loops/(\w+)<(\w+)>(Avx2)?/(\w+)/N:")
    rows, order = {}, []
    for r in runs:
        if r.get("run_type", "iteration") != "iteration":
            continue
        m = pattern.match(r["name"])
        if not m:
            continue
        kind, precision, half, model = m.groups()
        if kind == "Dense":  # the dense baseline runs in double; both precisions compare with it
            for p in ("double", "float"):
                rows.setdefault((model, p), {})["Dense"] = r
            continue
        key = (model, precision)
        if key not in rows or not rows[key]:
            order.append(key)
        rows.setdefault(key, {})[kind + ("Avx2" if half else "")] = r
    header, make_row = (PROX_LTL_HEADER, prox_ltl_row) if prox_ltl else (HEADER, row)
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for precision in ("double", "float"):
        for key in [k for k in order if k[1] == precision]:
            print(make_row(key, rows[key]))


def ns(r):
    return r["ns_per_env"] if r and "error_occurred" not in r else None


def row(key, cols):
    cells = [f"{key[0]} {key[1]}"]
    for c in COLUMNS:
        r = cols.get(c)
        t = ns(r)
        if t is None:
            cells.append("failed" if r else "")
        elif "ConvergedStep" in c:
            cells.append(f"{t:.0f} ({r.get('iterations', 0):.0f})")
        else:
            cells.append(f"{t:.0f}")
    aba, lcaba, scalar, dense = (ns(cols.get(c)) for c in ("Aba", "Lcaba1", "Lcaba1Scalar", "Dense"))
    half = ns(cols.get("Lcaba1Avx2"))
    ratio = lambda a, b: f"{a / b:.2f}×" if a and b else ""
    cells.append(ratio(lcaba, aba))
    cells.append(ratio(dense, lcaba))
    cells.append(ratio(ns(cols.get("ProxLtl1")), lcaba))
    cells.append(ratio(ns(cols.get("ProxLtl3")), ns(cols.get("Lcaba3"))))
    w = cols["Lcaba1"]["W"] if cols.get("Lcaba1") else 0
    cells.append(f"{scalar / lcaba:.1f}× ({scalar / lcaba / w:.2f} W)" if scalar and lcaba and w else "")
    cells.append(f"{scalar / half:.1f}× ({scalar / half / (w / 2):.2f} W/2)" if scalar and half and w else "")
    r = cols.get("Lcaba1")
    cells.append(f"{r['flops_per_env']:.0f}, {r['pct_peak']:.0f} %" if r and r.get("flops_per_env") else "")
    return "| " + " | ".join(cells) + " |"


if __name__ == "__main__":
    main(sys.argv[1], "--prox-ltl" in sys.argv[2:])
