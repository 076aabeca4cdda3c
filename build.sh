#!/usr/bin/env bash
# batchdyn build driver: installs the Debian packages that are missing, configures with CMake,
# builds and runs.
#   ./build.sh demo       Release build, then the main job: batched throughput on the shipped humanoid
#   ./build.sh test       Release build with warnings as errors (every lane ISA compiled), then the whole test suite
#   ./build.sh sanitize   tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   ./build.sh bench      Release build, then the Google Benchmark suite
set -euo pipefail
cd "$(dirname "$0")"
what="${1:-demo}"
jobs="$(nproc 2>/dev/null || echo 2)"

packages=(build-essential cmake libeigen3-dev libtbb-dev libxsimd-dev liburdfdom-dev libsdformat-dev doctest-dev
          libbenchmark-dev nlohmann-json3-dev
          # the Python module (for Debian's /usr/bin/python3), its tests and the PPO example
          pybind11-dev python3-dev python3-numpy python3-pytest python3-torch python3-matplotlib)

install_missing() {
  local missing=() p
  for p in "${packages[@]}"; do
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
  if ! { cmake -S . -B "$dir" "$@" && cmake --build "$dir" -j"$jobs"; } >"$log" 2>&1; then
    echo "== build failed; the log follows" >&2
    cat "$log" >&2
    exit 1
  fi
}

install_missing
case "$what" in
  demo)
    build build/release -DCMAKE_BUILD_TYPE=Release -DBATCHDYN_WERROR=OFF -DBATCHDYN_SANITIZE=OFF \
      -DBATCHDYN_BUILD_TESTS=OFF -DBATCHDYN_BUILD_BENCH=OFF
    bin=build/release/batchdyn
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
      --out build/release/humanoid_aba.json
    "$bin" eval models/humanoid.urdf --root free --algo aba --batched --in models/states/humanoid_demo.json \
      --out build/release/humanoid_aba_batched.json
    "$bin" eval models/humanoid.urdf --root free --constraints models/humanoid_feet.json --algo constrained \
      --in models/states/humanoid_demo.json --out build/release/humanoid_constrained.json
    echo "wrote build/release/humanoid_{aba,aba_batched,constrained}.json"
    ;;
  test)
    build build/test -DCMAKE_BUILD_TYPE=Release -DBATCHDYN_WERROR=ON -DBATCHDYN_SANITIZE=OFF \
      -DBATCHDYN_BUILD_TESTS=ON -DBATCHDYN_BUILD_BENCH=ON
    ctest --test-dir build/test --output-on-failure -j"$jobs"
    ;;
  sanitize)
    # The Python module is left out: an ASan-instrumented extension cannot load into an
    # uninstrumented python3 (the C++ tests cover the engine it wraps).
    build build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHDYN_SANITIZE=ON -DBATCHDYN_WERROR=ON \
      -DBATCHDYN_BUILD_TESTS=ON -DBATCHDYN_BUILD_BENCH=OFF -DBATCHDYN_ISA_TESTS=OFF -DBATCHDYN_BUILD_PYTHON=OFF
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build/sanitize --output-on-failure -j"$jobs" -E package_consumer
    ;;
  bench)
    build build/bench -DCMAKE_BUILD_TYPE=Release -DBATCHDYN_WERROR=OFF -DBATCHDYN_SANITIZE=OFF \
      -DBATCHDYN_BUILD_TESTS=OFF -DBATCHDYN_BUILD_BENCH=ON
    build/bench/bench/batchdyn_bench "${@:2}"
    ;;
  *)
    echo "usage: ./build.sh demo|test|sanitize|bench" >&2
    exit 1
    ;;
esac
