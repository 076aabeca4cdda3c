#!/usr/bin/env bash
# batchdyn build driver: installs the Debian packages that are missing, configures with CMake,
# builds and runs.
#   ./build.sh demo       Release build, then the main job on the shipped humanoid
#   ./build.sh test       Release build with warnings as errors, then the whole test suite
#   ./build.sh sanitize   tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   ./build.sh bench      Release build, then the Google Benchmark suite
set -euo pipefail
cd "$(dirname "$0")"
what="${1:-demo}"
jobs="$(nproc 2>/dev/null || echo 2)"

packages=(build-essential cmake libeigen3-dev libtbb-dev libxsimd-dev liburdfdom-dev doctest-dev
          libbenchmark-dev nlohmann-json3-dev)

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

build() {  # build <dir> <cmake options...>
  local dir="$1"
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

install_missing
case "$what" in
  demo)
    build build/release -DBATCHDYN_BUILD_TESTS=OFF
    bin=build/release/batchdyn
    echo "== batchdyn info models/humanoid.urdf --root free --constraints models/humanoid_feet.json"
    "$bin" info models/humanoid.urdf --root free --constraints models/humanoid_feet.json
    echo "== batchdyn eval (ABA, 4 environments): models/states/humanoid_demo.json"
    "$bin" eval models/humanoid.urdf --root free --algo aba --in models/states/humanoid_demo.json \
      --out build/release/humanoid_aba.json
    echo "wrote build/release/humanoid_aba.json"
    echo "== batchdyn eval (feet welded, dense proximal constrained dynamics)"
    "$bin" eval models/humanoid.urdf --root free --constraints models/humanoid_feet.json --algo constrained \
      --in models/states/humanoid_demo.json --out build/release/humanoid_constrained.json
    echo "wrote build/release/humanoid_constrained.json"
    echo "== reference-kernel throughput on the humanoid (one thread)"
    build/release/bench/batchdyn_bench --benchmark_filter='humanoid' --benchmark_min_time=0.2
    ;;
  test)
    build build/release -DBATCHDYN_WERROR=ON
    ctest --test-dir build/release --output-on-failure -j"$jobs"
    ;;
  sanitize)
    cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHDYN_SANITIZE=ON -DBATCHDYN_WERROR=ON \
      -DBATCHDYN_BUILD_BENCH=OFF >/dev/null
    cmake --build build/sanitize -j"$jobs"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build/sanitize --output-on-failure -j"$jobs" -E package_consumer
    ;;
  bench)
    build build/release -DBATCHDYN_BUILD_TESTS=OFF
    build/release/bench/batchdyn_bench "${@:2}"
    ;;
  *)
    echo "usage: ./build.sh demo|test|sanitize|bench" >&2
    exit 1
    ;;
esac
