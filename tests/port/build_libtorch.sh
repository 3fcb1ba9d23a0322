#!/usr/bin/env bash
# Builds the port programs as written against libtorch (tests/port/libtorch/) into <out dir>,
# for check_port.sh's loss comparison. Exits 77 (skipped) where CMake finds no libtorch
# (Debian: libtorch-dev).
# Usage: build_libtorch.sh <source dir> <out dir>
set -euo pipefail
src=$1
out=$2
mkdir -p "$out"
if ! cmake -S "$src/tests/port/libtorch" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1; then
  if grep -q 'provided by "Torch"' "$out/configure.log"; then
    rm -rf "$out"  # no stale programs for check_port.sh to compare with
    echo "port_libtorch: SKIPPED: no libtorch (find_package(Torch) failed; Debian: apt-get install libtorch-dev)"
    exit 77
  fi
  cat "$out/configure.log"
  exit 1
fi
cmake --build "$out" > "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
echo "port_libtorch: built the programs of tests/port/programs.txt against libtorch in $out"
