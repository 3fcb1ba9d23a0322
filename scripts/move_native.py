#!/usr/bin/env python3
"""Moves core/native's files into one folder per subsystem and rewrites every reference to them.

A pure move: `git mv` of each file below, then every tracked text file has its mentions of
`core/native/<file>` (includes, comments, docs, CMake) rewritten to `core/native/<folder>/<file>`,
and the CMake files their `native/<file>` source paths. Run from anywhere inside the checkout, on
a clean tree, once; it can be run again after merging branches that added references to the old
paths (already moved files are skipped; a file some branch added to core/native is reported and
left where it is: add it to MOVES).

  scripts/move_native.py            move and rewrite
  scripts/move_native.py --check    exit 1 if a reference to an old path is left (nothing changes)
"""
import argparse
import os
import re
import subprocess
import sys

# folder: the files of that subsystem (core/native/all_ops.def, the index of the op lists, stays).
MOVES = {
    "elementwise": ["bool_bytes.h", "cpu_loops.h", "elementwise.cpp", "elementwise.h", "elementwise_cpu.cpp",
                    "elementwise_math.cpp", "elementwise_math.h", "elementwise_math_cpu.cpp",
                    "elementwise_math_kernels.h", "elementwise_ops.def", "elementwise_run.cpp", "elementwise_run.h",
                    "math_ops.def", "strided_loop.cpp", "strided_loop.h"],
    "reduce": ["lane_sums.h", "median.cpp", "median.h", "reduce.cpp", "reduce.h", "reduce_cpu.cpp", "reduce_ops.def",
               "scan.cpp", "scan.h"],
    "gemm": ["gemm.cpp", "gemm.h", "gemm_bf16_pairs.h", "gemm_kernels.h", "gemm_nt.cpp", "gemm_packed.cpp",
             "gemm_packed.h", "linalg_ops.def"],
    "conv": ["conv2d.cpp", "conv2d.h", "conv2d_dense.cpp", "conv2d_dense.h", "conv2d_direct.cpp", "conv2d_direct.h",
             "conv2d_index.h", "conv2d_winograd.cpp", "conv2d_winograd.h", "conv2d_workspace.h", "conv_args.cpp",
             "conv_ops.def", "im2col.cpp", "im2col.h", "winograd_transforms.h", "winograd_transforms_avx2.h"],
    "attention": ["attention.cpp", "attention.h", "attention_cpu.cpp", "attention_flash.h", "attention_ops.def",
                  "attention_pairs.h", "attention_tiles.h"],
    "index": ["advanced_index.cpp", "gather_scatter.cpp", "index_cpu.cpp", "index_loops.h", "index_ops.h",
              "indexing_ops.def", "masked.cpp", "masked_cpu.cpp", "sort.cpp", "sort.h"],
    "shape": ["rearrange.cpp", "rearrange.h", "resample.cpp", "resample.h", "shape.cpp", "shape.h", "shape_ops.def"],
    "copy": ["copy.cpp", "copy.h", "range.cpp", "range.h", "tensor_ops.def"],
    "random": ["multinomial.cpp", "multinomial.h", "random.cpp", "random.h"],
    "activation": ["activation.cpp", "activation.h", "activation_ops.def", "dropout.cpp", "dropout.h", "softmax.cpp",
                   "softmax.h"],
    "norm": ["batch_norm.cpp", "batch_norm.h", "layer_norm.cpp", "layer_norm.h", "norm_ops.def"],
    "pooling": ["pooling.cpp", "pooling.h", "pooling_ops.def"],
    "loss": ["loss.cpp", "loss.h", "loss_ops.def"],
    "optim": ["foreach.cpp", "foreach.h", "optimizer_steps.cpp", "optimizer_steps.h"],
}
TEXT = (".h", ".cpp", ".cu", ".cuh", ".def", ".md", ".txt", ".cmake", ".py", ".sh", ".in")


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def rewrite(text, is_cmake):
    for folder, files in MOVES.items():
        for f in files:
            # core/native/<f> not followed by more of a name (conv2d.h is not conv2d_dense.h).
            text = re.sub(rf"core/native/{re.escape(f)}(?![\w.])", f"core/native/{folder}/{f}", text)
            if is_cmake:  # core/CMakeLists.txt and fuzz/ name sources relative to core/
                text = re.sub(rf"(?<![\w/])native/{re.escape(f)}(?![\w.])", f"native/{folder}/{f}", text)
                text = re.sub(rf"\}}/native/{re.escape(f)}(?![\w.])", f"}}/native/{folder}/{f}", text)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report references to old paths")
    args = parser.parse_args()
    root = git("rev-parse", "--show-toplevel", cwd=os.path.dirname(os.path.abspath(__file__))).strip()
    native = os.path.join(root, "core", "native")
    moved = {f for files in MOVES.values() for f in files}
    left = sorted(f for f in os.listdir(native) if os.path.isfile(os.path.join(native, f)) and f not in moved
                  and f != "all_ops.def")
    if left:
        print("move_native: not in MOVES, left in core/native: " + ", ".join(left))
    if not args.check:
        for folder, files in MOVES.items():
            os.makedirs(os.path.join(native, folder), exist_ok=True)
            for f in files:
                if os.path.exists(os.path.join(native, f)):
                    git("mv", f"core/native/{f}", f"core/native/{folder}/{f}", cwd=root)
    stale = []
    for path in git("ls-files", cwd=root).split("\n"):
        if not path or not (path.endswith(TEXT) or os.path.basename(path) == "CMakeLists.txt"):
            continue
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        new = rewrite(text, path.endswith((".cmake", ".txt")) and "CMakeLists" in path or path.endswith(".cmake"))
        if new != text:
            if args.check:
                stale.append(path)
            else:
                with open(full, "w", encoding="utf-8", errors="surrogateescape") as fh:
                    fh.write(new)
    if not args.check:
        cmake = os.path.join(root, "core", "CMakeLists.txt")
        with open(cmake, encoding="utf-8") as fh:
            text = fh.read()
        text = text.replace("*.cpp native/*.cpp cpu/*.cpp", "*.cpp native/*.cpp native/*/*.cpp cpu/*.cpp")
        with open(cmake, "w", encoding="utf-8") as fh:
            fh.write(text)
        print("move_native: moved; build, then commit (git add -A core/native and the rewritten files)")
    if stale:
        print("move_native: references to old core/native paths in: " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
