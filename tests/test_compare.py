"""Tests of tests/compare.py, tests/apps/safetensors_maxdiff.py and tests/port/compare_runs.py
with what must fail them: NaN in either argument, infinities against finite values or each
other, lengths, shapes and names that differ (the ctest test compare_py).
Usage: test_compare.py"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import compare  # noqa: E402

NAN, INF = math.nan, math.inf
# (got, ref) pairs that must never compare equal.
MISMATCHES = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (INF, 1.0), (1.0, INF), (INF, -INF), (-INF, INF), (INF, NAN)]


def write_safetensors(path, tensors):
    """tensors: {name: (dtype, shape, values)} written as safetensors (F64 or F32)."""
    header, body = {}, b""
    for name, (dtype, shape, values) in tensors.items():
        data = struct.pack("<%d%s" % (len(values), "d" if dtype == "F64" else "f"), *values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + body)


class Helpers(unittest.TestCase):
    def test_builtins_are_blind(self):  # why the module exists
        self.assertEqual(max(0.0, NAN), 0.0)
        self.assertEqual(list(zip([1, 2, 3], [1, 2])), [(1, 1), (2, 2)])

    def test_abs_diff_and_max_nan(self):
        self.assertEqual(compare.abs_diff(INF, INF), 0.0)
        self.assertEqual(compare.abs_diff(1.0, 3.0), 2.0)
        self.assertTrue(math.isnan(compare.max_nan(0.0, NAN)))
        self.assertTrue(math.isnan(compare.max_nan(NAN, 0.0)))
        self.assertEqual(compare.max_nan(1.0, 2.0), 2.0)
        for got, ref in MISMATCHES:
            self.assertFalse(compare.within(compare.abs_diff(got, ref), 1e300), (got, ref))

    def test_max_abs_diff(self):
        self.assertEqual(compare.max_abs_diff([1.0, 2.0], [1.0, 2.5]), 0.5)
        self.assertEqual(compare.max_abs_diff([INF, -INF], [INF, -INF]), 0.0)
        for got, ref in MISMATCHES:
            for at in (0, 2):  # first and last: a running maximum must keep it
                g, r = [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]
                g[at], r[at] = got, ref
                self.assertFalse(compare.within(compare.max_abs_diff(g, r), 1e300), (got, ref, at))
        with self.assertRaisesRegex(ValueError, "2 values against 3"):
            compare.max_abs_diff([1.0, 2.0], [1.0, 2.0, 3.0])
        with self.assertRaisesRegex(ValueError, "3 values against 2"):
            compare.max_abs_diff([1.0, 2.0, 3.0], [1.0, 2.0])

    def test_named(self):
        self.assertEqual(compare.max_abs_diff_named({"a": [1.0], "b": [2.0]}, {"b": [2.0], "a": [1.5]}), 0.5)
        with self.assertRaisesRegex(ValueError, r"missing \['b'\]"):
            compare.max_abs_diff_named({"a": [1.0]}, {"a": [1.0], "b": [2.0]})
        with self.assertRaisesRegex(ValueError, r"unexpected \['c'\]"):
            compare.max_abs_diff_named({"a": [1.0], "c": [2.0]}, {"a": [1.0]})
        with self.assertRaisesRegex(ValueError, "a: 1 values against 2"):
            compare.max_abs_diff_named({"a": [1.0]}, {"a": [1.0, 2.0]})
        self.assertTrue(math.isnan(compare.max_abs_diff_named({"a": [1.0], "b": [NAN]}, {"a": [1.0], "b": [0.0]})))


class SafetensorsMaxdiff(unittest.TestCase):
    tool = os.path.join(here, "apps", "safetensors_maxdiff.py")

    def run_tool(self, a, b, tol="1e-12"):
        d = tempfile.mkdtemp()
        pa, pb = os.path.join(d, "a.st"), os.path.join(d, "b.st")
        write_safetensors(pa, a)
        write_safetensors(pb, b)
        r = subprocess.run([sys.executable, self.tool, "--max", tol, pa, pb], capture_output=True, text=True)
        return r.returncode, r.stdout.strip()

    def test_equal_files_pass(self):
        t = {"w": ("F64", [2, 2], [1.0, 2.0, INF, -4.0]), "b": ("F64", [], [0.5])}
        self.assertEqual(self.run_tool(t, t), (0, "0.0"))
        self.assertEqual(self.run_tool(t, {**t, "b": ("F64", [], [0.5 + 1e-13])})[0], 0)

    def test_what_must_fail(self):
        base = {"w": ("F64", [3], [1.0, 2.0, 3.0])}
        for got, ref in MISMATCHES:
            rc, out = self.run_tool({"w": ("F64", [3], [1.0, 2.0, got])}, {"w": ("F64", [3], [1.0, 2.0, ref])})
            self.assertEqual(rc, 1, (got, ref, out))
        cases = {
            "a difference over the tolerance": ({"w": ("F64", [3], [1.0, 2.0, 3.1])}, "0.1"),
            "a missing name": ({}, "missing ['w']"),
            "an extra name": ({**base, "v": ("F64", [1], [0.0])}, "unexpected ['v']"),
            "a shorter tensor": ({"w": ("F64", [2], [1.0, 2.0])}, "shape [2] against [3]"),
            "another shape": ({"w": ("F64", [3, 1], [1.0, 2.0, 3.0])}, "shape [3, 1] against [3]"),
            "another dtype": ({"w": ("F32", [3], [1.0, 2.0, 3.0])}, "not F64"),
        }
        for what, (got, text) in cases.items():
            rc, out = self.run_tool(got, base)
            self.assertEqual(rc, 1, what)
            self.assertIn(text, out, what)


class CompareRuns(unittest.TestCase):
    """tests/port/compare_runs.py: the port programs' losses under gradring and libtorch."""
    tool = os.path.join(here, "port", "compare_runs.py")

    def run_tool(self, ours, theirs):
        d = tempfile.mkdtemp()
        pa, pb = os.path.join(d, "gradring.log"), os.path.join(d, "libtorch.log")
        open(pa, "w").write(ours)
        open(pb, "w").write(theirs)
        return subprocess.run([sys.executable, self.tool, pa, pb], capture_output=True, text=True).returncode

    def test_runs(self):
        run = "step 0 noise\nloss 0 2.5\nloss 1 2.25\nloss heldout 1.5\n"
        self.assertEqual(self.run_tool(run, run), 0)
        self.assertEqual(self.run_tool(run.replace("2.25", "2.2501"), run), 0)
        self.assertEqual(self.run_tool(run.replace("2.25", "2.3"), run), 1)
        self.assertEqual(self.run_tool(run.replace("2.25", "nan"), run), 1)
        self.assertEqual(self.run_tool(run, run.replace("2.25", "nan")), 1)
        self.assertEqual(self.run_tool(run.replace("2.25", "inf"), run), 1)
        self.assertEqual(self.run_tool(run.replace("loss heldout 1.5\n", ""), run), 1)  # a missing loss
        self.assertEqual(self.run_tool(run + "loss 2 1.0\n", run), 1)  # an extra one
        self.assertEqual(self.run_tool(run.replace("loss 1", "loss 7"), run), 1)  # another step
        oks = "ok  literals\nok  indexing\n"
        self.assertEqual(self.run_tool(oks, oks), 0)
        self.assertEqual(self.run_tool(oks, "ok  literals\n"), 1)
        self.assertEqual(self.run_tool("", ""), 1)  # nothing to compare


if __name__ == "__main__":
    unittest.main()
