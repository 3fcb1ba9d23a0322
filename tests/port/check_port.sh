#!/usr/bin/env bash
# One port program end to end, as a libtorch user ports it: install the build tree into a
# temporary prefix (install_package.sh), rename tests/port/<program>.cpp with port.sh, build
# it against the installed package alone, make its synthetic data set, and run it (its own
# checks: the loss falls). Then, where PORT_LIBTORCH_DIR holds the program built against
# libtorch (the port_libtorch test), run both with PORT_COMPARE=1 and compare their losses
# (Note [Port comparison] in port_compare.h).
# Usage: check_port.sh <build dir> <source dir> <program> <data set> [args...]
set -euo pipefail
build=$1
src=$2
program=$3
data=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/install/install_package.sh"
install_package "$build" "$src" "$tmp/prefix"
"$src/tests/port/port.sh" "$src/tests/port/$program.cpp" "$tmp/$program.cpp"
"$src/tests/port/port.sh" "$src/tests/port/port_compare.h" "$tmp/port_compare.h"
cmake -S "$src/tests/port" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DPORT_PROGRAM="$program" -DPORT_SOURCE="$tmp/$program.cpp" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
mkdir "$tmp/data"
"$tmp/build/make_port_data" "$data" "$tmp/data"
"$tmp/build/$program" "$tmp/data" "$@"

libtorch=${PORT_LIBTORCH_DIR:-}/$program
if [ -z "${PORT_LIBTORCH_DIR:-}" ] || [ ! -x "$libtorch" ]; then
  echo "port: no libtorch build of $program in '${PORT_LIBTORCH_DIR:-}' (see the port_libtorch test): losses not compared"
  exit 0
fi
# libtorch's MNIST reader wants all 60000 + 10000 images (Note [Port comparison]).
mkdir "$tmp/compare_data"
if [ "$data" = mnist ]; then
  "$tmp/build/make_port_data" mnist "$tmp/compare_data" 60000 10000
else
  "$tmp/build/make_port_data" "$data" "$tmp/compare_data"
fi
PORT_COMPARE=1 "$tmp/build/$program" "$tmp/compare_data" "$@" > "$tmp/gradring.log" 2>&1 || {
  cat "$tmp/gradring.log"; echo "port: $program under gradring with PORT_COMPARE=1 failed"; exit 1; }
PORT_COMPARE=1 "$libtorch" "$tmp/compare_data" "$@" > "$tmp/libtorch.log" 2>&1 || {
  cat "$tmp/libtorch.log"; echo "port: $program under libtorch with PORT_COMPARE=1 failed"; exit 1; }
python3 "$src/tests/port/compare_runs.py" "$tmp/gradring.log" "$tmp/libtorch.log"
