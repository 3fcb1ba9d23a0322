#!/usr/bin/env python3
"""The libtorch spelling audit: every op gradring has must be callable under every name libtorch
gives it, or be listed as a deliberate difference (docs/porting-from-libtorch.md).

libtorch's names are read from its own headers (Debian's libtorch-dev): ATen's free functions
(ATen/ops/*.h, torch::X), Tensor's methods (ATen/core/TensorBody.h, x.X and in place x.X_),
torch::nn::functional (F::X and the Options struct it takes) and torch::linalg. gradring's ops
are the op lists (core/native/*.def, Note [Op lists]), the gr::nn::functional headers, the
factories and the hand-written declarations of autograd/ops.h. For every op gradring has
(under any of these names) each libtorch spelling of it is required.

  spelling_audit.py            check (the ctest): exit 1 when a required spelling is neither in
                               gradring nor listed as a difference, or when the generated test
                               is stale; exit 77 (skipped) without libtorch-dev
  spelling_audit.py --write    rewrite tests/autograd/test_libtorch_spellings.cpp, the compiled
                               test naming every required spelling
  spelling_audit.py --report   print every op with its spellings and where each stands
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST = os.path.join(ROOT, "tests", "autograd", "test_libtorch_spellings.cpp")
PORTING = os.path.join(ROOT, "docs", "porting-from-libtorch.md")
SKIP = 77


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def without_detail(text):
    """libtorch's F:: headers keep their positional overloads in `namespace detail`."""
    out, depth, skipping = [], 0, False
    for line in text.split("\n"):
        if not skipping and re.match(r"\s*namespace detail\s*\{", line):
            skipping, depth = True, 0
        if skipping:
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                skipping = False
            continue
        out.append(line)
    return "\n".join(out)


# ---- libtorch ----

def libtorch_names(include):
    fn = set()
    for path in glob.glob(os.path.join(include, "ATen", "ops", "*.h")):
        base = os.path.basename(path)
        if re.search(r"_(ops|native|meta|meta_dispatch|cpu_dispatch|cuda_dispatch|compositeexplicitautograd_dispatch|"
                     r"compositeexplicitautogradnonfunctional_dispatch|compositeimplicitautograd_dispatch)\.h$", base):
            continue
        text = read(path)
        text = re.sub(r"namespace symint \{.*?\n\}", "", text, flags=re.S)
        for m in re.finditer(r"^inline [^\n(]*?\b(\w+)\(", text, re.M):
            name = m.group(1)
            if not name.endswith(("_out", "_outf")):
                fn.add(name)
    body = read(os.path.join(include, "ATen", "core", "TensorBody.h"))
    body = body[body.index("class TORCH_API Tensor: public TensorBase"):]
    body = body[:body.index("\n};")]
    methods = set(re.findall(r"^\s+(?:[\w:<>, &*]+?)[\s&*](\w+)\((?:[^;{]*)\)\s*const\s*;", body, re.M))
    functional, options = set(), {}
    for path in glob.glob(os.path.join(include, "torch", "csrc", "api", "include", "torch", "nn", "functional", "*.h")):
        text = without_detail(strip_comments(read(path)))
        for m in re.finditer(r"^inline\s+[\w:<>, ]+?\s+(\w+)\(([^{]*?)\)\s*\{", text, re.M | re.S):
            functional.add(m.group(1))
            o = re.search(r"const (\w+Options)\s*&", m.group(2))
            if o:
                options.setdefault(m.group(1), set()).add(o.group(1))
    linalg = set()
    path = os.path.join(include, "torch", "csrc", "api", "include", "torch", "linalg.h")
    text = without_detail(strip_comments(read(path)))
    for m in re.finditer(r"^inline\s+[\w:<>, ]+?\s+(\w+)\(", text, re.M):
        linalg.add(m.group(1))
    return fn, methods, functional, options, linalg


# ---- gradring ----

STRUCTURED = {
    # form: spellings of the line's name n (n_: the in-place name)
    "GR_UNARY_OP": ["fn", "method", "method_", "fn_"],
    "GR_BINARY_OP": ["fn", "method"],
    "GR_BINARY_SCALAR": ["fn", "method"],
    "GR_BINARY_SCALAR_SELF": ["fn"],
    "GR_LOGICAL_OP": ["fn", "method", "method_"],
    "GR_BITWISE_OP": ["fn", "method", "method_"],
    "GR_PREDICATE_OP": ["fn", "method"],
}
GENERIC = {"GR_OP": ["fn", "method"], "GR_OP_BY_METHOD": ["fn", "method"], "GR_OP_FN": ["fn"],
           "GR_OP_METHOD": ["method"], "GR_OP_INPLACE": ["fn", "method"], "GR_OP_INPLACE_METHOD": ["method"]}


def gradring_names():
    """(kind, name) pairs gradring declares: kind fn (gr::), method (Tensor::), F (gr::nn::functional),
    linalg (gr::linalg), and the F:: Options names."""
    have = set()
    for path in glob.glob(os.path.join(ROOT, "core", "native", "**", "*.def"), recursive=True):
        text = strip_comments(read(path))
        text = re.sub(r"^#.*$", "", text, flags=re.M)  # the lists' own #define/#ifndef lines
        for m in re.finditer(r"^(GR_\w+)\((.*?)\)\s*$", text, re.M | re.S):
            form, args = m.group(1), m.group(2)
            if form in STRUCTURED:
                n = re.match(r"\s*(\w+)", args).group(1)
                for s in STRUCTURED[form]:
                    have.add(("fn" if s.startswith("fn") else "method", n + "_" if s.endswith("_") else n))
            elif form in ("GR_BINARY_INPLACE", "GR_BINARY_SCALAR_INPLACE"):
                n, variants = re.match(r"\s*(\w+),.*,\s*(\w+)\s*$", args, re.S).groups()
                have.add(("method", n + "_"))
                if variants == "fn":
                    have.add(("fn", n + "_"))
            elif form == "GR_OP_INPLACE_OF":
                n, variants = re.match(r"\s*(\w+),\s*(\w+)", args).groups()
                if "method" in variants:
                    have.add(("method", n + "_"))
                if variants.startswith("fn"):
                    have.add(("fn", n + "_"))
            elif form in GENERIC:
                if form.startswith("GR_OP_INPLACE"):
                    n = re.match(r"\s*(\w+)", args).group(1)
                else:
                    n = re.match(r"\s*(?:GR_TYPE\([^)]*\)|[^,]+),\s*(\w+)", args).group(1)
                for s in GENERIC[form]:
                    have.add((s, n))
    ops_h = read(os.path.join(ROOT, "autograd", "ops.h"))
    linalg = ops_h[ops_h.index("namespace linalg {"):ops_h.index("}  // namespace linalg")]
    ops_h, linalg = strip_comments(ops_h), strip_comments(linalg)
    for n in re.findall(r"^Tensor (\w+)\(", linalg, re.M):
        have.add(("linalg", n))
    rest = ops_h.replace(linalg, "")
    for n in re.findall(r"^(?:Tensor|std::tuple<[^>]*>) (\w+)\(", rest, re.M):
        have.add(("fn", n))
    for header in ["core/factory.h", "core/factory_like.h", "core/random_ops.h"]:
        for n in re.findall(r"^Tensor (\w+)\(", strip_comments(read(os.path.join(ROOT, header))), re.M):
            have.add(("fn", n))
    options = set()
    for path in [os.path.join(ROOT, "nn", "functional.h")] + glob.glob(os.path.join(ROOT, "nn", "functional", "*.h")):
        text = without_detail(strip_comments(read(path)))
        for m in re.finditer(r"^(?:inline\s+)?(?:Tensor|std::tuple<[^>]*>)\s+(\w+)\(", text, re.M):
            have.add(("F", m.group(1)))
        options.update(re.findall(r"\b(?:struct|using)\s+(\w+FuncOptions)\b", text))
    options.update(re.findall(r"\b(?:struct|using)\s+(\w+Options)\b",
                              "\n".join(read(p) for p in glob.glob(os.path.join(ROOT, "nn", "**", "*.h"), recursive=True))))
    return have, options


def differences():
    """The spellings docs/porting-from-libtorch.md lists as deliberate differences: the first
    column of its table under '## Deliberate differences', one or more `spelling`s."""
    text = read(PORTING)
    m = re.search(r"^## Deliberate differences\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    listed = set()
    if m:
        for row in re.findall(r"^\|([^|\n]*)\|", m.group(1), re.M):
            listed.update(re.findall(r"`([\w:]+)`", row))
    return listed


KINDS = {"fn": "torch::{}", "method": "Tensor::{}", "F": "F::{}", "linalg": "torch::linalg::{}"}


def audit(include):
    fn, methods, functional, options, linalg = libtorch_names(include)
    have, gr_options = gradring_names()
    base_names = {n.rstrip("_") for _, n in have if n.rstrip("_")}
    required = {}  # spelling -> (kind, name)
    for base in sorted(base_names):
        for name in (base, base + "_"):
            if name in fn:
                required[f"torch::{name}"] = ("fn", name)
            if name in methods:
                required[f"Tensor::{name}"] = ("method", name)
        if base in functional:
            required[f"F::{base}"] = ("F", base)
            for o in sorted(options.get(base, ())):
                required[f"F::{o}"] = ("Foptions", o)
        if base in linalg:
            required[f"torch::linalg::{base}"] = ("linalg", base)
    provided = {s for s, (kind, name) in required.items()
                if (kind, name) in have or (kind == "Foptions" and name in gr_options)}
    listed = differences()
    missing = sorted(s for s in required if s not in provided and s not in listed)
    return required, provided, listed, missing


def packed(items, indent="", width=118):
    """Declarations several to a line, so that the file stays short."""
    lines, line = [], ""
    for item in items:
        if line and len(indent) + len(line) + 1 + len(item) > width:
            lines.append(indent + line)
            line = ""
        line = f"{line} {item}" if line else item
    if line:
        lines.append(indent + line)
    return lines


def generated_test(required, provided):
    groups = {"fn": [], "method": [], "F": [], "Foptions": [], "linalg": []}
    for s in sorted(provided):
        kind, name = required[s]
        groups[kind].append(name)
    out = ["// Generated by scripts/spelling_audit.py --write (do not edit): every libtorch spelling of an op",
           "// gradring has, as gradring spells it, named once so that this file fails to compile when one",
           "// goes missing. The audit (ctest spelling_audit) checks this list is complete; the op lists'",
           "// test (test_op_lists.cpp) checks that every spelling they declare is defined.",
           "#include <doctest/doctest.h>", "#include <gradring/gradring.h>", "",
           "namespace spellings {", "namespace torch_functions {"]
    out += packed([f"using gr::{n};" for n in groups["fn"]])
    out += ["}  // namespace torch_functions", "namespace torch_linalg {"]
    out += packed([f"using gr::linalg::{n};" for n in groups["linalg"]])
    out += ["}  // namespace torch_linalg", "namespace torch_nn_functional {"]
    out += packed([f"using gr::nn::functional::{n};" for n in groups["F"] + groups["Foptions"]])
    out += ["}  // namespace torch_nn_functional",
            "struct TensorMethods : gr::Tensor {"]
    out += packed([f"using gr::Tensor::{n};" for n in groups["method"]], indent="  ")
    out += ["};", "}  // namespace spellings", "",
            f'TEST_CASE("every libtorch spelling of gradring\'s ops compiles ({len(provided)} names)") {{',
            "  // The names above are the test; this checks the generated file's own count.",
            f"  CHECK({len(groups['fn'])} + {len(groups['method'])} + {len(groups['F'])} + {len(groups['Foptions'])} + "
            f"{len(groups['linalg'])} == {len(provided)});",
            "}", ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--include", default="/usr/include", help="where libtorch-dev's headers are")
    parser.add_argument("--write", action="store_true", help="rewrite the generated test")
    parser.add_argument("--report", action="store_true", help="print every spelling and where it stands")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.include, "ATen", "core", "TensorBody.h")):
        print("spelling_audit: SKIPPED: libtorch-dev not installed (no ATen/core/TensorBody.h under "
              f"{args.include})")
        return SKIP
    required, provided, listed, missing = audit(args.include)
    if args.report:
        for s in sorted(required):
            state = "ok" if s in provided else ("difference" if s in listed else "MISSING")
            print(f"{state:10} {s}")
    test = generated_test(required, provided)
    if args.write:
        with open(TEST, "w", encoding="utf-8") as f:
            f.write(test)
        print(f"spelling_audit: wrote {os.path.relpath(TEST, ROOT)} ({len(provided)} spellings)")
    failed = False
    if missing:
        print(f"spelling_audit: {len(missing)} libtorch spellings of gradring's ops are missing (add them through "
              "the op lists, or list them with a reason under '## Deliberate differences' in "
              "docs/porting-from-libtorch.md):")
        for s in missing:
            print("  " + s)
        failed = True
    stale = sorted(s for s in listed if s in provided)
    if stale:
        print("spelling_audit: listed as differences but present in gradring (remove them from the list): "
              + ", ".join(stale))
        failed = True
    if not args.write and (not os.path.exists(TEST) or read(TEST) != test):
        print("spelling_audit: tests/autograd/test_libtorch_spellings.cpp is stale: run scripts/spelling_audit.py --write")
        failed = True
    if not failed:
        print(f"spelling_audit: ok: {len(provided)} libtorch spellings present, {len(required) - len(provided)} "
              "deliberate differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
