#!/usr/bin/env python3
"""Delassus benchmark report: the scaling figure and the ratio table (bench/batched_delassus.cpp).

    build/bench/bench/batchdyn_bench --benchmark_filter='^Delassus/' \\
        --benchmark_out=delassus.json --benchmark_out_format=json
    .venv/bin/python bench/delassus_figure.py delassus.json [--figure docs/delassus_scaling.png]

Prints, per model and precision (one thread): ns per environment of PV-OSIMr and PV-OSIM on SIMD
lanes, PV-OSIMr on W = 1 lanes and the dense baseline, with the ratios the issue asks for
(SIMD vs W = 1, PV-OSIMr vs dense, PV-OSIM / PV-OSIMr) and 2 threads vs 1 where measured.
The figure (matplotlib, in .venv) has stem length on x and time per
environment on y, one line per algorithm and branch count, double and float side by side, and
a third panel with the counted flops of PV-OSIMr and PV-OSIM (machine-independent).
"""
import json
import re
import sys
from collections import defaultdict

PATTERN = re.compile(r"Delassus/([\w-]+)/(Simd|Scalar)/(\w+)/([\w:]+)/N:(\d+)/threads:(\d+)")


def load(path):
    ns = {}
    flops = {}
    for r in json.load(open(path))["benchmarks"]:
        if r.get("run_type", "iteration") != "iteration" or "error_occurred" in r:
            continue
        m = PATTERN.match(r["name"])
        if not m:
            continue
        algo, lanes, precision, model, _, threads = m.groups()
        key = (algo, lanes, precision, model, int(threads))
        ns[key] = r["ns_per_env"]
        flops[key] = r.get("flops_per_env", 0)
    return ns, flops


def table(ns, flops):
    models = sorted({k[3] for k in ns}, key=lambda m: (m.startswith("welded_stem"), [int(x) if x.isdigit() else x for x in re.split(r"[:_]", m)]))
    print("| model | precision | PV-OSIMr SIMD ns/env | PV-OSIM SIMD | PV-OSIMr W=1 | dense | SIMD/W=1 | PV-OSIMr vs dense | PV-OSIM/PV-OSIMr time | flops r / o | 2 threads vs 1 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for model in models:
        for precision in ("double", "float"):
            get = lambda algo, lanes, threads=1: ns.get((algo, lanes, precision, model, threads))
            r, o, r1, d = get("pv-osimr", "Simd"), get("pv-osim", "Simd"), get("pv-osimr", "Scalar"), get("dense", "Scalar")
            if r is None:
                continue
            r2 = get("pv-osimr", "Simd", 2)
            fr, fo = flops.get(("pv-osimr", "Simd", precision, model, 1), 0), flops.get(("pv-osim", "Simd", precision, model, 1), 0)
            cell = lambda x: f"{x:.0f}" if x else "-"
            ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"
            print(f"| {model} | {precision} | {cell(r)} | {cell(o)} | {cell(r1)} | {cell(d)} | {ratio(r1, r)} | {ratio(d, r)} | "
                  f"{ratio(o, r)} | {fr:.0f} / {fo:.0f} | {ratio(r, r2)} |")


def figure(ns, flops, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(17, 5), sharey=False)
    styles = {("pv-osimr", "Simd"): ("PV-OSIMr (SIMD)", "-"), ("pv-osim", "Simd"): ("PV-OSIM (SIMD)", "--"),
              ("pv-osimr", "Scalar"): ("PV-OSIMr (W = 1)", ":"), ("dense", "Scalar"): ("dense J M^-1 J^T", "-.")}
    colours = {1: "tab:blue", 2: "tab:orange", 4: "tab:green"}
    for ax, precision in zip(axes, ("double", "float")):
        for (algo, lanes), (label, style) in styles.items():
            for branches, colour in colours.items():
                points = sorted((int(k[3].split(":")[1]), v) for k, v in ns.items()
                                if k[:3] == (algo, lanes, precision) and k[4] == 1 and k[3].startswith("welded_stem:")
                                and int(k[3].split(":")[2]) == branches)
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], style, color=colour, marker=".",
                            label=f"{label}, {branches} branch{'es' if branches > 1 else ''}/end")
        ax.set_xlabel("stem length (links)")
        ax.set_ylabel("time per environment (ns), one core")
        ax.set_yscale("log")
        ax.set_title(f"Delassus matrix, welded branch tips, {precision}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    # The counted flops (layout/counting_lane.hpp): machine-independent, as the paper's op counts.
    ax = axes[2]
    for algo, label, style in (("pv-osimr", "PV-OSIMr", "-"), ("pv-osim", "PV-OSIM", "--")):
        for branches, colour in colours.items():
            points = sorted((int(k[3].split(":")[1]), v) for k, v in flops.items()
                            if k[:3] == (algo, "Simd", "double") and k[4] == 1 and k[3].startswith("welded_stem:")
                            and int(k[3].split(":")[2]) == branches)
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], style, color=colour, marker=".",
                        label=f"{label}, {branches} branch{'es' if branches > 1 else ''}/end")
    ax.set_xlabel("stem length (links)")
    ax.set_ylabel("floating-point operations per environment")
    ax.set_title("Counted flops (machine-independent)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ns, flops = load(sys.argv[1])
    table(ns, flops)
    if "--figure" in sys.argv:
        figure(ns, flops, sys.argv[sys.argv.index("--figure") + 1])
