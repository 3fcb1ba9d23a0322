#!/usr/bin/env python3
"""The PyTorch peers of the comparison scripts: how to run a given Python's torch at its best
on this machine, and what it is (version, BLAS actually loaded, CPU capability).

A peer is a Python whose torch the benchmarks compare with: a venv's pip wheel (MKL inside
libtorch_cpu) or Debian's python3-torch, whose BLAS is whatever libblas.so.3 resolves to. On
Debian that is netlib's reference BLAS unless OpenBLAS is installed, so for a torch built
with BLAS_INFO=generic the scripts put OpenBLAS's libblas.so.3 first (LD_LIBRARY_PATH, folder
from --openblas / GRADRING_OPENBLAS_DIR, default Debian's libopenblas0-openmp folder) and,
on CPUs with AVX-512, set OPENBLAS_CORETYPE=SkylakeX (OpenBLAS 0.3.21 picks slower kernels
on CPUs newer than it knows, such as Zen 4 and 5). A peer still on reference BLAS is
refused: it would make any ratio against it meaningless.

  bench/peers.py env PY [--openblas DIR]        VAR=VALUE words for `env` (may be none)
  bench/peers.py describe PY [--openblas DIR]   one line: torch version, BLAS, capability, attention
  bench/peers.py check PY [--openblas DIR]      describe, and exit 1 if torch is missing or on reference BLAS
  bench/peers.py machine                        one line: CPU model, family/model, CPUs, AVX-512 flags
"""
import argparse
import json
import os
import subprocess
import sys

DEFAULT_OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

# Runs inside the peer's Python: what its torch really uses, after one product.
PROBE = r"""
import ctypes, json, torch
import torch.nn.functional as F
a = torch.randn(64, 64)
(a @ a).sum().item()
config = torch.__config__.show()
info = {"torch": torch.__version__, "blas_info": "", "blas": "", "capability": "",
        "sdpa": hasattr(F, "scaled_dot_product_attention")}
for line in config.splitlines():
    if "BLAS_INFO=" in line:
        info["blas_info"] = line.split("BLAS_INFO=")[1].split(",")[0]
    if "Math Kernel Library" in line:
        info["blas"] = line.strip(" -")
try:
    info["capability"] = torch.backends.cpu.get_cpu_capability()
except AttributeError:
    info["capability"] = next((l.split(":")[1].strip() for l in config.splitlines() if "CPU capability" in l), "")
if info["blas_info"] != "mkl":
    libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.split()[-1].lower()})
    for lib in libs:
        try:
            get = ctypes.CDLL(lib).openblas_get_config
            get.restype = ctypes.c_char_p
            info["blas"] = get().decode() + " (" + lib + ")"
            break
        except (OSError, AttributeError):
            pass
    else:
        info["blas"] = "reference BLAS (" + ", ".join(libs) + ")" if libs else "unknown"
print(json.dumps(info))
"""


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def machine():
    fields = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    except OSError:
        pass
    flags = cpu_flags()
    avx512 = " ".join(f for f in ("avx512f", "avx512_bf16") if f in flags) or "no AVX-512"
    return (f"{fields.get('Model name', 'unknown CPU')} (family {fields.get('CPU family', '?')} model "
            f"{fields.get('Model', '?')}), {os.cpu_count()} CPUs, {avx512}")


def uses_generic_blas(python):
    """True when `python`'s torch was built against the system libblas.so.3 (Debian's)."""
    code = "import torch; print('BLAS_INFO=generic' in torch.__config__.show())"
    p = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() == "True"


def peer_env(python, openblas):
    """The variables to run `python`'s torch with (its fastest BLAS on this CPU)."""
    env = {}
    if uses_generic_blas(python) and os.path.isdir(openblas):
        env["LD_LIBRARY_PATH"] = openblas + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
        if "avx512f" in cpu_flags() and "OPENBLAS_CORETYPE" not in os.environ:
            env["OPENBLAS_CORETYPE"] = "SkylakeX"
    return env


def describe(python, openblas):
    """(one-line description, info dict or None)."""
    env = dict(os.environ, **peer_env(python, openblas))
    p = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return f"{python}: no usable torch ({(p.stderr.strip().splitlines() or ['?'])[-1]})", None
    info = json.loads(p.stdout.strip().splitlines()[-1])
    extra = " ".join(f"{k}={v}" for k, v in peer_env(python, openblas).items() if k != "LD_LIBRARY_PATH")
    text = (f"{python}: torch {info['torch']}, BLAS {info['blas'] or info['blas_info']}"
            f"{', ' + extra if extra else ''}, CPU capability {info['capability'] or '?'}, "
            f"attention {'F.scaled_dot_product_attention' if info['sdpa'] else 'composite (torch < 2.0)'}")
    return text, info


def run_under_python_option(argv=None):
    """For scripts that time torch in their own process (compare_attention.py,
    compare_resnet_ops.py): with --python PY, run this script again under PY, with its peer
    environment, before torch is imported; the run under PY goes on. Call it first."""
    argv = sys.argv if argv is None else argv
    python = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--python"), None)
    python = python or next((a.split("=", 1)[1] for a in argv if a.startswith("--python=")), None)
    if python is None or os.environ.get("GRADRING_PEER_PYTHON") == python:
        return
    openblas = os.environ.get("GRADRING_OPENBLAS_DIR", DEFAULT_OPENBLAS)
    env = dict(os.environ, GRADRING_PEER_PYTHON=python, **peer_env(python, openblas))
    os.execve(python, [python] + argv, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["env", "describe", "check", "machine"])
    ap.add_argument("python", nargs="?")
    ap.add_argument("--openblas", default=os.environ.get("GRADRING_OPENBLAS_DIR", DEFAULT_OPENBLAS),
                    help="folder holding OpenBLAS's libblas.so.3 (default: $GRADRING_OPENBLAS_DIR or " + DEFAULT_OPENBLAS + ")")
    a = ap.parse_args()
    if a.what == "machine":
        print(machine())
        return 0
    if not a.python:
        ap.error(f"{a.what} needs the peer's Python")
    if a.what == "env":
        words = [f"{k}={v}" for k, v in peer_env(a.python, a.openblas).items()]
        if any(len(w.split()) != 1 for w in words):
            sys.exit(f"peers: {words}: a folder with spaces cannot be passed to the scripts")
        print(" ".join(words))
        return 0
    text, info = describe(a.python, a.openblas)
    print(text)
    if a.what == "check":
        if info is None:
            return 1
        if info["blas"].startswith("reference BLAS"):
            print(f"peers: {a.python}'s torch runs on the reference BLAS, not a fair peer: install OpenBLAS "
                  f"(apt-get install libopenblas0-openmp) or pass --openblas DIR (the folder of its libblas.so.3)",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
