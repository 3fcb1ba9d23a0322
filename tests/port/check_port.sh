#!/usr/bin/env bash
# One port program end to end, as a libtorch user ports it: install the build tree into a
# temporary prefix (install_package.sh), rename tests/port/<program>.cpp with port.sh, build
# it against the installed package alone, make its synthetic data set, and run it.
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
cmake -S "$src/tests/port" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DPORT_PROGRAM="$program" -DPORT_SOURCE="$tmp/$program.cpp" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
mkdir "$tmp/data"
"$tmp/build/make_port_data" "$data" "$tmp/data"
"$tmp/build/$program" "$tmp/data" "$@"
