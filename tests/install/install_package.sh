# Sourced by check_install.sh and tests/port/check_port.sh: install_package <build dir>
# <source dir> <prefix> installs the build tree into <prefix> and checks that exactly the
# public headers were installed (public_headers.txt: gradring.h and what it includes; an
# internal header that a public one starts to include shows up here).
install_package() {
  local build=$1 src=$2 prefix=$3
  local work
  work=$(dirname "$prefix")
  cmake --install "$build" --prefix "$prefix" > "$work/install.log"
  (cd "$prefix/include/gradring" && find . -name '*.h' -o -name '*.def' | sed 's|^\./||' | LC_ALL=C sort) > "$work/installed.txt"
  grep -v '^#' "$src/tests/install/public_headers.txt" | LC_ALL=C sort > "$work/expected.txt"
  if ! diff "$work/expected.txt" "$work/installed.txt" > "$work/headers.diff"; then
    echo "install_package: the installed headers differ from tests/install/public_headers.txt"
    echo "('>' installed but not public: an internal header reached from gradring.h; '<' public but not installed):"
    cat "$work/headers.diff"
    return 1
  fi
}
