#!/usr/bin/env python3
"""Writes docs/benchmarks.md from one run of the benchmark suite (batchdyn_bench's JSON).

    python3 bench/benchmarks_page.py --bench build/bench/bench/batchdyn_bench   # runs the suite, then writes the page
    python3 bench/benchmarks_page.py --json bench.json                          # from a saved run

Every table is made from the JSON of a single run, so its ratios (SIMD against W = 1, two
threads against one, contact against none, batchdyn against MuJoCo) are taken on the same host
in the same minutes. The page states the host's CPU, the lane width and the command.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

# What the page runs: the benchmarks its tables read (a few minutes on 2 cores).
FILTER = "|".join([
    r"^Aba(Simd|Scalar)<(double|float)>/(humanoid|quadruped)/N:4096/threads:[12]/",
    r"^AbaKernel<(double|float)>/(humanoid|quadruped)/",
    r"^Step(Simd|Scalar)<(double|float)>/humanoid/N:4096/threads:1/",
    r"^Step(Contact|NoContact|ContactScalar|ContactPgs)<(double|float)>/quadruped_standing/N:4096/threads:[12]/",
    r"^Delassus/(pv-osimr|pv-osim)/(Simd|Scalar)/(double|float)/humanoid_feet_hands/N:1024/threads:1/",
    r"^Delassus/dense/Scalar/double/humanoid_feet_hands/",
    r"^Loops/(Aba|Lcaba1|Lcaba3|ProxBbo1|ProxBbo3|Lcaba1Scalar|ProxLtl1)<(double|float)>/(humanoid_feet|hand_cube)/",
    r"^Peer(Mujoco|MujocoBatch|Batchdyn|Forward)",
    # The Pinocchio peer: every robot's ABA; the loop cases and Delassus matrices of its tables,
    # with batchdyn's rows for them.
    r"^PeerPinocchio(Batchdyn)?/aba",
    r"^PeerPinocchio/(constraintDynamics|lcaba)[13]/(PINOCCHIO_LOOPS)/",
    r"^Loops/Lcaba[13]<(double|float)>/(PINOCCHIO_LOOPS)/",
    r"^PeerPinocchio/compute(Pv)?DelassusMatrix/(PINOCCHIO_DELASSUS)/",
    r"^Delassus/pv-osimr/Simd/(double|float)/(PINOCCHIO_DELASSUS)/N:1024/threads:1/",
])
# The cases of the Pinocchio tables: loops (bench/bench_models.hpp) Pinocchio can state (connect and
# weld) and, for the Delassus matrix, those whose constraints all hold a link to the world (where
# Pinocchio 4.1's computeDelassusMatrix is right; bench/pinocchio_peer.cpp).
PINOCCHIO_LOOPS = ("humanoid_feet", "humanoid_feet_hands", "quadruped_feet", "hand_cube", "cassie_v2_cut", "humanoid_hands_cube_feet")
PINOCCHIO_DELASSUS = ("humanoid_feet_hands", "quadruped_feet")
FILTER = FILTER.replace("PINOCCHIO_LOOPS", "|".join(PINOCCHIO_LOOPS)).replace("PINOCCHIO_DELASSUS", "|".join(PINOCCHIO_DELASSUS))

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "benchmarks.md")


def run_bench(binary, out):
    command = [binary, f"--benchmark_filter={FILTER}", f"--benchmark_out={out}", "--benchmark_out_format=json"]
    print("running:", " ".join(shlex.quote(c) for c in command), file=sys.stderr)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return command


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def rows_by_name(runs):
    """The runs by name without Google Benchmark's option suffixes (/min_time:..., /real_time)."""
    out = {}
    for r in runs:
        if r.get("run_type", "iteration") != "iteration" or "error_occurred" in r:
            continue
        out[re.sub(r"(/min_time:[0-9.]+|/real_time|/repeats:[0-9]+)+$", "", r["name"])] = r
    return out


def rate(r):
    return r.get("items_per_second", 0.0) if r else 0.0


def fmt_rate(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k"
    return f"{x:.0f}"


def ratio(a, b):
    return f"{a / b:.1f}×" if a and b else "–"


def ns(r):
    return f"{r.get('ns_per_env', 0):.0f}" if r else "–"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def aba_section(b):
    rows = []
    for model in ("humanoid", "quadruped"):
        for p in ("double", "float"):
            simd1 = b.get(f"AbaSimd<{p}>/{model}/N:4096/threads:1")
            simd2 = b.get(f"AbaSimd<{p}>/{model}/N:4096/threads:2")
            scalar = b.get(f"AbaScalar<{p}>/{model}/N:4096/threads:1")
            if not simd1:
                continue
            rows.append([model, p, int(simd1.get("W", 0)), fmt_rate(rate(scalar)), fmt_rate(rate(simd1)), ratio(rate(simd1), rate(scalar)),
                         fmt_rate(rate(simd2)), ratio(rate(simd2), rate(simd1)), f"{simd1.get('ns_per_env', 0):.0f}",
                         f"{simd1.get('flops_per_env', 0):,.0f}", f"{simd1.get('pct_peak', 0):.1f} / {simd1.get('pct_measured_peak', 0):.1f}"])
    if not rows:
        return ""
    text = ["## Forward dynamics (ABA) through the engine",
            "",
            "`Batch::forward_dynamics()` on 4096 random states (gather, checks, actuation, damping, ABA, scatter), "
            "env-evaluations per second. W = 1 is the same engine and kernel on scalars (`ScalarBatch`); % of peak is "
            "of the nominal peak (W × 2 FMA × 2 pipes × the clock) and of the FMA peak measured in the same run. The "
            "library is compiled without contracting a multiply and an add into one FMA (`-ffp-contract=off`, so that a "
            "SIMD lane computes bit for bit what W = 1 computes): they are two instructions, and on a core whose adds "
            "run on its FMA pipes (Intel's) such code reaches at most half of either peak.",
            "",
            table(["model", "precision", "W", "W = 1, 1 thread", "SIMD, 1 thread", "SIMD / W = 1", "SIMD, 2 threads",
                   "2 / 1 threads", "ns per env", "flops per env", "% of peak (nominal / measured)"], rows)]
    kernel_rows = []
    for model in ("humanoid", "quadruped"):
        for p in ("double", "float"):
            k = b.get(f"AbaKernel<{p}>/{model}/N:1024")
            if k:
                kernel_rows.append([model, p, f"{k.get('ns_per_env', 0):.0f}", f"{k.get('pct_peak', 0):.1f} / {k.get('pct_measured_peak', 0):.1f}"])
    if kernel_rows:
        text += ["", "The kernel alone (`aba_kernel` on states already in lanes, one workspace, no stages around it), 1024 environments:",
                 "", table(["model", "precision", "ns per env", "% of peak (nominal / measured)"], kernel_rows)]
    return "\n".join(text)


def step_section(b):
    rows = []
    for p in ("double", "float"):
        on = b.get(f"StepContact<{p}>/quadruped_standing/N:4096/threads:1")
        off = b.get(f"StepNoContact<{p}>/quadruped_standing/N:4096/threads:1")
        two = b.get(f"StepContact<{p}>/quadruped_standing/N:4096/threads:2")
        pgs = b.get(f"StepContactPgs<{p}>/quadruped_standing/N:4096/threads:1")
        scalar = b.get(f"StepContactScalar<{p}>/quadruped_standing/N:4096/threads:1")
        if not on:
            continue
        rows.append([p, fmt_rate(rate(on)), f"{on.get('contact_iterations', 0):.1f}", fmt_rate(rate(off)), ratio(rate(off), rate(on)),
                     fmt_rate(rate(two)), ratio(rate(two), rate(on)), fmt_rate(rate(pgs)), ratio(rate(on), rate(scalar))])
    text = []
    if rows:
        text += ["## Steps with contact",
                 "",
                 "The shipped quadruped standing under PD on its four sphere feet, 4096 environments, dt = 2 ms, env-steps per "
                 "second (ADMM unless said; iterations per step in the last step).",
                 "",
                 table(["precision", "contact, 1 thread", "ADMM iterations", "no contact", "no contact / contact", "contact, 2 threads",
                        "2 / 1 threads", "PGS, 1 thread", "SIMD / W = 1"], rows)]
    hum = []
    for p in ("double", "float"):
        s = b.get(f"StepSimd<{p}>/humanoid/N:4096/threads:1")
        sc = b.get(f"StepScalar<{p}>/humanoid/N:4096/threads:1")
        if s:
            hum.append([p, fmt_rate(rate(s)), ns(s), fmt_rate(rate(sc)) if sc else "–", ratio(rate(s), rate(sc))])
    if hum:
        text += ["", "The free humanoid from random poses (no collision geometry; its joint limits are rows of the contact stage), "
                 "4096 environments, 1 thread:", "", table(["precision", "env-steps/s", "ns per env", "W = 1", "SIMD / W = 1"], hum)]
    return "\n".join(text)


def delassus_section(b):
    rows = []
    for p in ("double", "float"):
        r = b.get(f"Delassus/pv-osimr/Simd/{p}/humanoid_feet_hands/N:1024/threads:1")
        o = b.get(f"Delassus/pv-osim/Simd/{p}/humanoid_feet_hands/N:1024/threads:1")
        s = b.get(f"Delassus/pv-osimr/Scalar/{p}/humanoid_feet_hands/N:1024/threads:1")
        d = b.get(f"Delassus/dense/Scalar/{p}/humanoid_feet_hands/N:256/threads:1")
        if r:
            rows.append([p, ns(r), ns(o), ratio(rate(r), rate(s)), ns(d), ratio(rate(r), rate(d))])
    if not rows:
        return ""
    return "\n".join(["## Delassus matrices",
                      "",
                      "G = J M⁻¹ Jᵀ of the humanoid with feet and hands welded (24 rows), 1024 environments, 1 thread, ns per "
                      "environment: PV-OSIMr and PV-OSIM on SIMD lanes, PV-OSIMr on W = 1, and the dense CRBA + Cholesky baseline.",
                      "",
                      table(["precision", "PV-OSIMr", "PV-OSIM", "PV-OSIMr SIMD / W = 1", "dense", "PV-OSIMr / dense"], rows)])


def loops_section(b):
    rows = []
    pattern = re.compile(r"^Loops/(\w+?)(Scalar)?<(double|float)>/(\w+)/N:1024$")
    found = {}
    for name, r in b.items():
        m = pattern.match(name)
        if m:
            found[(m.group(1) + (m.group(2) or ""), m.group(3), m.group(4))] = r
    for model in ("humanoid_feet", "hand_cube"):
        for p in ("double", "float"):
            get = lambda k: found.get((k, p, model))
            aba = get("Aba")
            if not aba:
                continue
            cell = lambda k: ns(get(k))
            rows.append([model, p, cell("Aba"), cell("Lcaba1"), cell("Lcaba3"), cell("ProxBbo1"), cell("ProxBbo3"), cell("Lcaba1Scalar"), cell("ProxLtl1")])
    if not rows:
        return ""
    return "\n".join(["## Constrained dynamics with loops",
                      "",
                      "`forward_dynamics()` with the loop solver at a fixed iteration count (1 or 3), 1024 environments, 1 thread, ns "
                      "per environment; ABA is the same tree without its loops; proxLTL is the scalar joint-space baseline "
                      "(Pinocchio's `constraintDynamics` algorithm), one environment at a time.",
                      "",
                      table(["model", "precision", "ABA", "LCABA 1", "LCABA 3", "proxBBO 1", "proxBBO 3", "LCABA 1, W = 1", "proxLTL 1"], rows)])


def peer_section(b, context):
    """Two tables: one core (mj_step in a loop, batchdyn on one thread) and all cores (MuJoCo's batch
    API, batchdyn on all threads), each batchdyn rate over MuJoCo's of the same robot and run."""
    tables = []
    for title, suffix, peer in (("one core", "", "PeerMujoco<double>/{robot}/cone:elliptic/N:4096"),
                                ("all cores", "/threads:all", "PeerMujocoBatch<double>/{robot}/cone:elliptic/threads:all/N:4096")):
        rows = []
        for robot in ("a1_standing", "humanoid_standing", "go2_mjcf_standing", "h1_mjcf_standing"):
            r = b.get(peer.format(robot=robot))
            if not r:
                continue
            d, f = b.get(f"PeerBatchdyn<double>/{robot}{suffix}/N:4096"), b.get(f"PeerBatchdyn<float>/{robot}{suffix}/N:4096")
            rows.append([robot, str(int(r.get("threads", 1))), fmt_rate(rate(r)), fmt_rate(rate(d)), ratio(rate(d), rate(r)),
                         fmt_rate(rate(f)), ratio(rate(f), rate(r))])
        if rows:
            tables += [f"**{title.capitalize()}**" + (" (MuJoCo's batch API, `mjbatch.h`):" if suffix else " (`mj_step` in a loop):"), "",
                       table(["robot", "threads", "MuJoCo", "batchdyn double", "vs MuJoCo", "batchdyn float", "vs MuJoCo"], rows), ""]
    memory = []
    kb = lambda x, key="bytes_per_env": f"{x[key] / 1024:.1f}" if x and x.get(key) else "–"  # noqa: E731
    mb = lambda x: f"{x['workspace_bytes'] / 2 ** 20:.1f}" if x and "workspace_bytes" in x else "–"  # noqa: E731
    for robot in ("a1_standing", "humanoid_standing", "go2_mjcf_standing", "h1_mjcf_standing"):
        r = b.get(f"PeerMujoco<double>/{robot}/cone:elliptic/N:4096")
        d, f = b.get(f"PeerBatchdyn<double>/{robot}/N:4096"), b.get(f"PeerBatchdyn<float>/{robot}/N:4096")
        if not (r and d and r.get("bytes_per_env") and d.get("bytes_per_env")):
            continue
        used = r.get("mjdata_in_use_bytes", 0)
        memory.append([robot, kb(r), f"{used / 1024:.1f}", kb(d, "state_bytes_per_env"), mb(d), kb(d), ratio(used, d["bytes_per_env"]),
                       kb(f, "state_bytes_per_env"), mb(f), kb(f), ratio(used, f.get("bytes_per_env") if f else 0)])
    if memory:
        tables += ["**Memory per environment**, KiB: the heap bytes that 4096 environments add, over 4096 (glibc's `mallinfo2` "
                   "read around the same code for both: MuJoCo's `mj_copyData` of the settled `mjData`; batchdyn's `Batch` from "
                   "construction through its settling and timed steps on one thread: state rows, contact results, warm starts and "
                   "the thread's lane-block workspace). Most of an `mjData` is its arena, sized ahead of use; \"in use\" is what "
                   "the settled environment used of it: `sizeof(mjData)` + `nbuffer` + the arena's and the stack's high-water "
                   "marks after its steps. batchdyn's bytes are its state (every environment's rows, allocated by the "
                   "constructor) and one workspace per thread (MiB, made by the first step; its dense contact problem grows to "
                   "the largest block's), shared by the environments; \"per env\" is their sum over 4096 on one thread. The ratios "
                   "are MuJoCo's bytes in use over batchdyn's per env:", "",
                   table(["robot", "MuJoCo", "MuJoCo in use", "double: state", "workspace (MiB)", "per env", "MuJoCo / batchdyn",
                          "float: state", "workspace (MiB)", "per env", "MuJoCo / batchdyn"], memory), ""]
    if not tables:
        return ("## Against MuJoCo\n\nNot in this run: `bench/mujoco_peer.cpp` builds when CMake finds the `mujoco` wheel "
                "(its libmujoco and headers) in the Python given as `-DPython_EXECUTABLE` (`./build.sh bench` passes `.venv`'s).")
    version = context.get("mujoco", "?")
    return "\n".join(["## Against MuJoCo", "",
                      f"MuJoCo {version} (the `mujoco` wheel). The same robot (an MJCF generated from batchdyn's model: bodies, "
                      "inertias, armature, limits, contact geometry), 4096 environments standing, dt = 2 ms, semi-implicit Euler, "
                      "the same PD clamped to the effort limits before every step. MuJoCo: its defaults (Newton solver, tolerance "
                      "1e-8, soft contacts), elliptic cones, condim 3, mu = 1; batchdyn: rigid contact by ADMM (tolerance 1e-5 "
                      "float, 1e-6 double), elliptic cones, mu = 1. `go2_mjcf_standing` is Unitree's Go2 MJCF, loaded by each engine "
                      "from the same XML with the file's settings and each engine's own defaults: MuJoCo with impratio 100, "
                      "condim 1 / 6 geoms, soft contacts and joint frictionloss; batchdyn with rigid contacts, sliding friction only "
                      "and no frictionloss (docs/mjcf.md); PD kp 60, kd 5 (Unitree's stand_go2 gains: it stands on its four feet), clamped to the motors' ctrlrange. "
                      "`h1_mjcf_standing` is Unitree's H1 MJCF the same way, on its mesh feet (MuJoCo's convex hulls; batchdyn's, "
                      "64 vertices each), PD per joint kp = 10 x the motor's torque range, kd = 0.03 kp. "
                      "Env-steps per second (`bench/mujoco_peer.cpp`):", ""] + tables)


def pinocchio_section(b, context):
    """Pinocchio against batchdyn, one core: aba on every robot, constraintDynamics and lcaba against
    LCABA at the same iteration count, the Delassus matrix against PV-OSIMr."""
    version = context.get("pinocchio")
    if not version:
        return ("## Against Pinocchio\n\nNot in this run: `bench/pinocchio_peer.cpp` builds when CMake finds the `pin` wheel's "
                "headers (`python -m cmeel cmake`) in the Python given as `-DPython_EXECUTABLE` (`./build.sh bench` passes `.venv`'s).")
    aba = []
    for name, r in sorted(b.items(), key=lambda kv: kv[0].lower()):
        m = re.match(r"^PeerPinocchio/aba/([\w-]+)/N:1024$", name)
        if not m:
            continue
        robot = m.group(1)
        d, f = b.get(f"PeerPinocchioBatchdyn/aba<double>/{robot}/N:1024"), b.get(f"PeerPinocchioBatchdyn/aba<float>/{robot}/N:1024")
        aba.append([robot, int(d.get("flops_per_env", 0)) if d else "–", ns(r), ns(d), ratio(rate(d), rate(r)), ns(f), ratio(rate(f), rate(r)),
                    ratio(rate(f), rate(d))])
    loops = []
    for case in PINOCCHIO_LOOPS:
        for k in (1, 3):
            cd, lc = b.get(f"PeerPinocchio/constraintDynamics{k}/{case}/N:1024"), b.get(f"PeerPinocchio/lcaba{k}/{case}/N:1024")
            d, f = b.get(f"Loops/Lcaba{k}<double>/{case}/N:1024"), b.get(f"Loops/Lcaba{k}<float>/{case}/N:1024")
            if not (cd and d):
                continue
            loops.append([case, int(cd.get("constraint_rows", 0)), k, ns(cd), ns(lc), ns(d), ratio(rate(d), rate(cd)), ratio(rate(d), rate(lc)),
                          ns(f), ratio(rate(f), rate(cd))])
    delassus = []
    for case in PINOCCHIO_DELASSUS:
        full, pv = b.get(f"PeerPinocchio/computeDelassusMatrix/{case}/N:1024"), b.get(f"PeerPinocchio/computePvDelassusMatrix/{case}/N:1024")
        d = b.get(f"Delassus/pv-osimr/Simd/double/{case}/N:1024/threads:1")
        f = b.get(f"Delassus/pv-osimr/Simd/float/{case}/N:1024/threads:1")
        if not (full and d):
            continue
        best = max(rate(full), rate(pv))
        delassus.append([case, int(full.get("constraint_rows", 0)), ns(full), ns(pv), f"{full.get('differs_from_batchdyn', 0):.0e}", ns(d),
                         ratio(rate(d), best), ns(f), ratio(rate(f), best)])
    text = ["## Against Pinocchio", "",
            f"Pinocchio {version} (the `pin` wheel's headers, compiled header-only with this build's flags, `-march=native` included) "
            "and batchdyn on the same robots, one core, 1024 random states, ns per environment (`bench/pinocchio_peer.cpp`). "
            "Pinocchio's model is built from batchdyn's, joint by joint (continuous joints as revolute; 0.01 kg m² armature on "
            "every 1-dof joint in both; no damping), and each case first checks that both libraries compute the same result. "
            "Pinocchio runs one state after another; batchdyn the whole batch through `Batch` on SIMD lanes. "
            "The ratios are Pinocchio's time over batchdyn's.", ""]
    if aba:
        text += ["**Forward dynamics**: `pinocchio::aba` (double) against `Batch::forward_dynamics()` (ABA, no effort clamp):", "",
                 table(["robot", "flops per env", "Pinocchio", "batchdyn double", "vs Pinocchio", "batchdyn float", "vs Pinocchio",
                        "float / double"], aba), ""]
    if loops:
        text += ["**Constrained dynamics with loops**: `pinocchio::constraintDynamics` (proxLTL: the sparse KKT factorisation, then k "
                 "proximal iterations) and `pinocchio::lcaba` (Pinocchio's own LCABA), both double with mu = 1e-6 and exactly k iterations, "
                 "against batchdyn's LCABA with k sweeps (`Loops/Lcaba<k>`, `bench/batched_loops.cpp`):", "",
                 table(["case", "rows", "k", "constraintDynamics", "lcaba", "batchdyn double", "vs constraintDynamics", "vs lcaba",
                        "batchdyn float", "vs constraintDynamics"], loops), ""]
    if delassus:
        text += ["**Delassus matrix** G = J M⁻¹ Jᵀ: `pinocchio::computeDelassusMatrix` and `computePvDelassusMatrix` (each with its own "
                 "kinematics pass, as PV-OSIMr; the upper triangle they fill, mirrored) against "
                 "PV-OSIMr (`Batch::delassus`). \"Agreement\" is the largest difference from batchdyn's matrix relative to its largest "
                 "entry. Only cases whose constraints hold links to the world: for a constraint between two moving links Pinocchio "
                 f"{version}'s matrix is not J M⁻¹ Jᵀ. The ratios are against the faster of Pinocchio's two.", "",
                 table(["case", "rows", "computeDelassusMatrix", "computePvDelassusMatrix", "agreement", "PV-OSIMr double",
                        "vs Pinocchio", "PV-OSIMr float", "vs Pinocchio"], delassus), ""]
    return "\n".join(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", help="the batchdyn_bench binary to run")
    parser.add_argument("--json", help="a saved run (--benchmark_out_format=json) instead of running the suite")
    parser.add_argument("--out", default=DOC, help="the page to write (default docs/benchmarks.md)")
    args = parser.parse_args()
    if not args.bench and not args.json:
        parser.error("give --bench BINARY or --json FILE")
    command = None
    path = args.json
    if args.bench:
        path = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(args.out)), "..", "build", "benchmarks.json"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        command = run_bench(args.bench, path)
        doc = json.load(open(path))
        doc.setdefault("context", {})["command"] = command  # so that --json on this file states it too
        json.dump(doc, open(path, "w"), indent=2)
    doc = json.load(open(path))
    runs = doc["benchmarks"]
    context = doc.get("context", {})
    command = command or context.get("command")
    b = rows_by_name(runs)
    for r in b.values():  # counters sit next to the timings in Google Benchmark's JSON
        r.update({k: v for k, v in r.get("counters", {}).items()})
    how = " ".join(shlex.quote(c) for c in command) if command else f"a saved run, {path}"
    sections = [s for s in (aba_section(b), step_section(b), delassus_section(b), loops_section(b), peer_section(b, context),
                                      pinocchio_section(b, context)) if s]
    page = [
        "# Benchmarks",
        "",
        "Generated by `bench/benchmarks_page.py` from one run of the benchmark suite (`bench/`, Google Benchmark); "
        "do not edit by hand. Absolute rates on shared machines drift by ±20 % between runs: compare the ratios, "
        "which are taken within the run.",
        "",
        f"- host: {cpu_model()}, {context.get('num_cpus', os.cpu_count())} cores seen, {context.get('mhz_per_cpu', '?')} MHz reported",
        f"- run: {context.get('date', datetime.datetime.now().isoformat(timespec='minutes'))}",
        f"- command: `{how}`",
        "- reproduce: `./build.sh bench` builds the suite; `python3 bench/benchmarks_page.py --bench build/bench/bench/batchdyn_bench` "
        "runs it and writes this page.",
        "- training: [time_to_walk.md](time_to_walk.md) (how long Go2 takes to learn to walk on this machine) and "
        "[training.md](training.md) (where PPO's time goes) are written by their own scripts from training runs.",
        "",
    ]
    page += [s + "\n" for s in sections]
    open(args.out, "w").write("\n".join(page))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
