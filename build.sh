#!/usr/bin/env bash
# batchdyn build driver: installs the Debian packages that are missing, makes the project's Python
# environment .venv (requirements.txt, constraints.txt), configures with CMake, builds and runs.
#   ./build.sh demo       `pip install .` into .venv, then the main job: batched throughput on the shipped humanoid
#   ./build.sh test       Release build with warnings as errors (every lane ISA compiled), then the whole test suite
#                         (the Python tests with .venv's Python and the build tree's module)
#   ./build.sh test fast  the same build, then the tests labelled `fast` (docs/testing.md)
#   ./build.sh sanitize   tests under AddressSanitizer + UndefinedBehaviorSanitizer, then 15 s of each loader fuzzer
#   ./build.sh fuzz [s]   the loaders' libFuzzer targets (Clang), s seconds each (default 60)
#   ./build.sh bench      Release build, then the Google Benchmark suite
set -euo pipefail
cd "$(dirname "$0")"
what="${1:-demo}"
jobs="$(nproc 2>/dev/null || echo 2)"

# The C++ side comes from Debian; the Python side (NumPy, pybind11, torch, Gymnasium, ...) from
# PyPI, into .venv. python3-venv and python3-dev serve Debian's python3 when it is the one on PATH.
packages=(build-essential cmake libeigen3-dev libtbb-dev libxsimd-dev liburdfdom-dev libsdformat-dev doctest-dev
          libbenchmark-dev nlohmann-json3-dev libassimp-dev python3-venv python3-dev
          libegl1 libegl-mesa0 libgl1-mesa-dri  # Mesa's EGL: MuJoCo's offscreen renderer for batchdyn.viewer, no screen
          libjs-three)                          # three.js, which batchdyn.viewer.write_html inlines in its page
# Debian's CMake (3.25), on purpose: the CMake files of Debian's packages are written for it (pip's
# CMake 4.x, often first on PATH, configures the tree too). pip's build of the wheel is told to use
# it as well (CMAKE_EXECUTABLE, read by scikit-build-core).
cmake=/usr/bin/cmake
ctest=/usr/bin/ctest
export CMAKE_EXECUTABLE=$cmake

# The fuzz targets need Clang and its fuzzer runtime (./build.sh fuzz and sanitize only).
fuzz_packages=(clang libclang-rt-14-dev libfuzzer-14-dev)
# The tests open the viewer's page in a headless browser (./build.sh test and sanitize).
test_packages=(chromium)

install_missing() {
  local missing=() p
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# build <dir> <cmake options...>: configures and builds in <dir>. Every command passes all of
# its options (and uses its own folder), so the commands work in any order in one clone.
# Compiler output goes to <dir>/build.log, shown only when the build fails.
build() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  local log="$dir/build.log"
  echo "== building in $dir (log: $log)"
  if ! { "$cmake" -S . -B "$dir" "$@" && "$cmake" --build "$dir" -j"$jobs"; } >"$log" 2>&1; then
    echo "== build failed; the log follows" >&2
    cat "$log" >&2
    exit 1
  fi
}

# python_env: the project's Python environment .venv (python3 -m venv, with the first python3 on
# PATH) with the pinned packages: torch first and alone (the CPU wheel on the build machines'
# disk; a package needing torch, installed first, would pull a multi-GB CUDA build), then
# requirements.txt under constraints.txt. Installed again only when those files change.
python_env() {
  local stamp=.venv/batchdyn-requirements.txt pip=(.venv/bin/pip install -q --disable-pip-version-check)
  [ -x .venv/bin/python ] || python3 -m venv .venv
  if ! cat requirements.txt constraints.txt | cmp -s - "$stamp"; then
    echo "== installing the pinned Python packages into .venv (log: build/venv.log)"
    mkdir -p build
    if ! { "${pip[@]}" "$(grep -m1 '^torch==' requirements.txt)" \
           && "${pip[@]}" -r requirements.txt -c constraints.txt; } >build/venv.log 2>&1; then
      echo "== pip install failed; the log follows" >&2
      cat build/venv.log >&2
      exit 1
    fi
    cat requirements.txt constraints.txt >"$stamp"
  fi
}

# run_fuzzers <seconds>: builds the libFuzzer targets (fuzz/) with Clang in build/fuzz and runs
# each for <seconds>, seeded with the shipped files and the saved reproducers
# (tests/fuzz_regressions/); the corpus grows in build/fuzz/corpus/. A finding is written to
# build/fuzz/findings/<loader>/ and fails the command: minimise it (-minimize_crash=1), fix it
# and save it under tests/fuzz_regressions/<loader>/.
run_fuzzers() {
  local seconds="$1" failed=0 loader
  build build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHDYN_FUZZ=ON -DBATCHDYN_WERROR=ON \
    -DBATCHDYN_SANITIZE=OFF -DBATCHDYN_BUILD_TESTS=OFF -DBATCHDYN_BUILD_BENCH=OFF -DBATCHDYN_BUILD_CLI=OFF -DBATCHDYN_BUILD_PYTHON=OFF \
    -DPython_EXECUTABLE="$PWD/.venv/bin/python"  # its mujoco wheel: the MJCF target
  for loader in urdf sdf constraints contacts scene mesh mjcf; do
    local seeds=build/fuzz/seeds/$loader corpus=build/fuzz/corpus/$loader findings=build/fuzz/findings/$loader
    rm -rf "$seeds"
    mkdir -p "$seeds" "$corpus" "$findings"
    # The corpus files keep a prefix: models/ has copies of some (a1.urdf), and one cp of two
    # sources with the same name fails.
    case "$loader" in
      urdf) cp models/*.urdf "$seeds"/ && for f in tests/robots/*.urdf; do cp "$f" "$seeds/robots_${f##*/}"; done ;;
      sdf) cp models/*.sdf "$seeds"/ && for f in tests/robots/*.sdf; do cp "$f" "$seeds/robots_${f##*/}"; done ;;
      constraints|contacts) cp models/*.json "$seeds"/ ;;
      scene) cp models/scenes/*.json "$seeds"/ ;;
      mesh) cp tests/robots/mjcf/unitree_h1/assets/left_ankle_link.STL "$seeds"/ ;;  # one binary STL; the ASCII STL and OBJ seeds are the regressions'
      mjcf) for f in tests/robots/mjcf/*/*.xml; do g=${f#tests/robots/mjcf/}; cp "$f" "$seeds/${g//\//_}"; done ;;
    esac
    cp tests/fuzz_regressions/"$loader"/* "$seeds"/
    echo "== fuzzing the $loader loader for $seconds s (log: build/fuzz/$loader.log)"
    if build/fuzz/fuzz/batchdyn_fuzz_"$loader" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
         -artifact_prefix="$findings/" "$corpus" "$seeds" >"build/fuzz/$loader.log" 2>&1; then
      grep -E "^Done [0-9]+ runs" "build/fuzz/$loader.log" || true
    else
      failed=1
      echo "== the $loader fuzzer found an input (in $findings/):" >&2
      grep -v "^    #" "build/fuzz/$loader.log" | tail -30 >&2
    fi
  done
  return "$failed"
}

case "$what" in
  fuzz) install_missing "${fuzz_packages[@]}"; python_env ;;  # its mujoco wheel: the MJCF fuzzer
  sanitize) install_missing "${fuzz_packages[@]}" "${test_packages[@]}"; python_env ;;
  test) install_missing "${test_packages[@]}" ;;
  *) install_missing ;;
esac
case "$what" in
  demo)
    python_env
    # The wheel's CMake build lives in build/wheel (pyproject.toml): a second run rebuilds only
    # what changed. Its output goes to build/wheel.log, shown only when it fails.
    echo "== pip install . (into .venv; log: build/wheel.log)"
    mkdir -p build/demo
    if ! .venv/bin/pip install -v --disable-pip-version-check --no-build-isolation . >build/wheel.log 2>&1; then
      echo "== pip install failed; the log follows" >&2
      cat build/wheel.log >&2
      exit 1
    fi
    bin=.venv/bin/batchdyn
    out=build/demo
    echo "== batchdyn info models/humanoid.urdf --root free --constraints models/humanoid_feet.json"
    "$bin" info models/humanoid.urdf --root free --constraints models/humanoid_feet.json | sed -n 1,4p  # sed reads to the end: no SIGPIPE under pipefail
    echo "== batchdyn bench: 4096 humanoids, batched forward dynamics (ABA), double then float, all cores"
    "$bin" bench --envs 4096 --precision double --seconds 3
    "$bin" bench --envs 4096 --precision float --seconds 3
    echo "== the same kernel on W = 1 scalar lanes, for comparison"
    "$bin" bench --envs 4096 --precision float --seconds 3 --scalar
    echo "== batchdyn bench --step: full semi-implicit Euler steps (dt = 1 ms)"
    "$bin" bench --envs 4096 --precision float --seconds 3 --step
    echo "== batchdyn eval: 4 humanoid states, reference vs batched ABA, and with the feet welded"
    "$bin" eval models/humanoid.urdf --root free --algo aba --in models/states/humanoid_demo.json \
      --out $out/humanoid_aba.json
    "$bin" eval models/humanoid.urdf --root free --algo aba --batched --in models/states/humanoid_demo.json \
      --out $out/humanoid_aba_batched.json
    "$bin" eval models/humanoid.urdf --root free --constraints models/humanoid_feet.json --algo constrained \
      --in models/states/humanoid_demo.json --out $out/humanoid_constrained.json
    echo "wrote $out/humanoid_{aba,aba_batched,constrained}.json"
    echo "== the same from Python: import batchdyn (the installed package), 4096 quadrupeds stepped on their feet"
    .venv/bin/python -c "
import time, batchdyn
batch = batchdyn.Batch(batchdyn.load(batchdyn.model_path('quadruped.urdf'), root='free'), 4096)
batch.step(1e-3)
t = time.perf_counter(); [batch.step(1e-3) for _ in range(50)]; dt = (time.perf_counter() - t) / 50
print(f'batchdyn {batchdyn.__version__} from {batchdyn.__file__}: {batch.num_envs / dt / 1e6:.2f} M env-steps/s')"
    ;;
  test)
    python_env
    build build/test -DCMAKE_BUILD_TYPE=Release -DBATCHDYN_WERROR=ON -DBATCHDYN_SANITIZE=OFF \
      -DBATCHDYN_BUILD_TESTS=ON -DBATCHDYN_BUILD_BENCH=ON -DBATCHDYN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python"
    case "${2:-all}" in
      all) "$ctest" --test-dir build/test --output-on-failure -j"$jobs" ;;
      fast) "$ctest" --test-dir build/test --output-on-failure -j"$jobs" -L fast ;;
      *) echo "usage: ./build.sh test [fast]" >&2; exit 1 ;;
    esac
    ;;
  sanitize)
    # The Python module is left out: an ASan-instrumented extension cannot load into an
    # uninstrumented python3 (the C++ tests cover the engine it wraps).
    # -O1 -g1, as AddressSanitizer's documentation advises: GCC 12 at -O2 -g spent tens of
    # minutes on each of the large translation units (the CLI's bench, the test batches).
    build build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DBATCHDYN_SANITIZE=ON -DBATCHDYN_WERROR=ON \
      -DBATCHDYN_BUILD_TESTS=ON -DBATCHDYN_BUILD_BENCH=OFF -DBATCHDYN_ISA_TESTS=OFF -DBATCHDYN_BUILD_PYTHON=OFF \
      -DPython_EXECUTABLE="$PWD/.venv/bin/python"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$ctest" --test-dir build/sanitize --output-on-failure -j"$jobs" -E package_consumer
    run_fuzzers 15
    ;;
  fuzz)
    run_fuzzers "${2:-60}"
    ;;
  bench)
    python_env  # its mujoco wheel is the MuJoCo peer (bench/mujoco_peer.cpp)
    build build/bench -DCMAKE_BUILD_TYPE=Release -DBATCHDYN_WERROR=OFF -DBATCHDYN_SANITIZE=OFF \
      -DBATCHDYN_BUILD_TESTS=OFF -DBATCHDYN_BUILD_BENCH=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python"
    build/bench/bench/batchdyn_bench "${@:2}"
    ;;
  *)
    echo "usage: ./build.sh demo|test [fast]|sanitize|bench|fuzz [seconds]" >&2
    exit 1
    ;;
esac
