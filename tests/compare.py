"""NaN-safe comparisons for the tests' Python side, the twin of tests/compare.h (Note
[Comparisons that see NaN] there): Python's max() keeps whichever of NaN and a number comes
first and zip() stops at the shorter list, so checks built on them pass on NaN, on truncated
tensors and on missing names. Here NaN never matches, an infinity matches only itself, and
lengths and names must agree (a ValueError says what differs). Tested by test_compare.py."""
import math


def abs_diff(got, ref):
    """|got - ref|: 0 for equal values (equal infinities too), NaN if either is NaN, inf for an
    infinity against anything but itself."""
    return 0.0 if got == ref else abs(got - ref)


def max_nan(a, b):
    """The larger of a and b, NaN if either is."""
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def max_abs_diff(got, ref):
    """The largest abs_diff over two sequences of the same length (ValueError otherwise)."""
    got, ref = list(got), list(ref)
    if len(got) != len(ref):
        raise ValueError("%d values against %d" % (len(got), len(ref)))
    worst = 0.0
    for g, r in zip(got, ref):
        worst = max_nan(worst, abs_diff(g, r))
    return worst


def check_same_names(got, ref):
    """ValueError naming what one mapping has and the other lacks."""
    missing, extra = sorted(set(ref) - set(got)), sorted(set(got) - set(ref))
    if missing or extra:
        raise ValueError("names differ: missing %s, unexpected %s" % (missing, extra))


def max_abs_diff_named(got, ref):
    """The largest max_abs_diff over two mappings name -> sequence with the same names."""
    check_same_names(got, ref)
    worst = 0.0
    for name in ref:
        try:
            worst = max_nan(worst, max_abs_diff(got[name], ref[name]))
        except ValueError as e:
            raise ValueError("%s: %s" % (name, e)) from None
    return worst


def within(d, tol):
    """d <= tol, false for NaN."""
    return d <= tol
