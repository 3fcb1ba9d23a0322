#!/usr/bin/env bash
# Installs the build tree into a temporary prefix (checking that exactly the public headers
# were installed: install_package.sh), then configures, builds and runs the consumer project
# against the installed package alone.
# Usage: check_install.sh <build dir> <source dir>
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/install/install_package.sh"
install_package "$build" "$src" "$tmp/prefix"
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/consumer/consumer"
