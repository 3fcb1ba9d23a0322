#!/usr/bin/env python3
"""Compares the machine code of two builds of gradring_core, function by function: for a change
that must leave the kernels' code as it was (a move, a refactor of declarations). Addresses,
immediates and jump/call targets are masked (layout moves them), so a function counts as
unchanged when its instructions are. Object files are matched by file name, so a build before
and after scripts/move_native.py compare too.

  scripts/compare_objects.py BUILD_BEFORE BUILD_AFTER   (e.g. /work/main/build build)

Prints, per object file, the functions that differ or are gone, then the totals, and the
element loops (cpu_map's lambdas, where the kernels spend their time) separately.
"""
import glob
import os
import re
import subprocess
import sys


def functions(obj):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", obj], capture_output=True, text=True).stdout
    result, current = {}, None
    for line in out.split("\n"):
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            current = m.group(1)
            result[current] = []
            continue
        if not current or not line.strip() or line.startswith("Disassembly") or "nop" in line:
            continue
        ins = re.sub(r"^\s*[0-9a-f]+:\s*", "", line).strip()
        ins = re.sub(r"^(call|jmp|j[a-z]+)\s+.*$", r"\1 TARGET", ins)
        ins = re.sub(r"#.*$", "", ins)
        ins = re.sub(r"\b0x[0-9a-f]+\b", "IMM", ins)
        result[current].append(ins.strip())
    return result


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    suffix = "core/CMakeFiles/gradring_core.dir"
    before = sorted(glob.glob(os.path.join(sys.argv[1], suffix, "**", "*.o"), recursive=True))
    after = {os.path.basename(p): p for p in glob.glob(os.path.join(sys.argv[2], suffix, "**", "*.o"), recursive=True)}
    totals = {"functions": 0, "identical": 0, "differ": 0, "gone": 0, "loops": 0, "loops identical": 0}
    for path in before:
        name = os.path.basename(path)
        if name not in after:
            print(f"{name}: not in the second build")
            continue
        a, b = functions(path), functions(after[name])
        hot = [f for f in a if "cold" not in f and not f.startswith("_GLOBAL__")]
        differ = [f for f in hot if f in b and a[f] != b[f]]
        gone = [f for f in hot if f not in b]
        loops = [f for f in hot if "_M_invoke" in f]
        totals["functions"] += len(hot)
        totals["identical"] += len(hot) - len(differ) - len(gone)
        totals["differ"] += len(differ)
        totals["gone"] += len(gone)
        totals["loops"] += len(loops)
        totals["loops identical"] += len([f for f in loops if f in b and a[f] == b[f]])
        for f in differ:
            print(f"{name}: differs: {f[:160]}")
        for f in gone:
            print(f"{name}: gone (or inlined): {f[:160]}")
    print(", ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
