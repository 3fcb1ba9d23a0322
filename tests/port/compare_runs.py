"""Compares a port program's PORT_COMPARE=1 output under gradring with the same program's under
libtorch (Note [Port comparison] in port_compare.h): the "loss <what> <value>" lines must name
the same steps in the same order, and every value must be within the tolerance below (NaN and
infinities fail, tests/compare.py). A program that prints no losses (autograd_tour) must print
the same "ok <check>" lines in both.
Usage: compare_runs.py <gradring output> <libtorch output>"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare  # noqa: E402  (tests/compare.py)

# Both runs start from the same float32 weights and see the same batches; they differ only by
# float32 rounding (summation orders, vectorised exp/log), about 1e-7 relative per operation,
# which training feeds from step to step. Seen with libtorch 1.13 (relative to max(1, |loss|)):
# mnist (SGD) 1e-7 over 100 steps; transformer_classifier 9e-5, lstm_lm 2e-4 over 60 and 100
# Adam(W) steps; dcgan 6.2e-4 after 6 steps (Adam's first steps are about lr * sign(gradient),
# so a gradient within rounding of zero moves its weight by up to 2 lr either way). 5e-3 is 8x
# the worst of these; a real difference shows above it within a few steps: libtorch's StepLR
# decaying one step later (docs/porting-from-libtorch.md) moved the loss by 2e-2 at once.
RTOL = 5e-3


def read(path):
    losses, oks = [], []
    for line in open(path, errors="replace"):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "loss":
            losses.append((parts[1], float(parts[2])))
        elif parts[:1] == ["ok"]:
            oks.append(line.strip())
    return losses, oks


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    (ours, our_oks), (theirs, their_oks) = read(argv[0]), read(argv[1])
    if not ours and not theirs:
        if our_oks and our_oks == their_oks:
            print("compare_runs: the same %d checks pass under gradring and libtorch" % len(our_oks))
            return 0
        print("compare_runs: FAILED: no losses, and the checks differ: gradring %s, libtorch %s" % (our_oks, their_oks))
        return 1
    names = [n for n, _ in ours]
    if names != [n for n, _ in theirs]:
        print("compare_runs: FAILED: the runs print different losses: gradring %s, libtorch %s"
              % (names, [n for n, _ in theirs]))
        return 1
    worst, at = 0.0, None
    for (name, g), (_, t) in zip(ours, theirs):
        r = compare.abs_diff(g, t) / max(1.0, abs(t))
        if not compare.within(r, worst):  # NaN sticks
            worst, at = r, (name, g, t)
        if not compare.within(r, RTOL):
            print("compare_runs: FAILED: loss %s: gradring %.9g, libtorch %.9g (relative difference %.3g > %g)"
                  % (name, g, t, r, RTOL))
            return 1
    print("compare_runs: %d losses agree with libtorch's; largest relative difference %.3g%s"
          % (len(ours), worst, " (loss %s: %.9g vs %.9g)" % at if at else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
