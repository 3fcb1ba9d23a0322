#!/usr/bin/env python3
"""Loss curves of train_gpt and bench/gpt_torch.py (their --curve CSVs: step,train_loss,val_loss)
drawn into one SVG with matplotlib:

  python tools/plot_curves.py --out docs/images/gpt-tiny-curve.svg gradring=gr.csv pytorch=torch.csv

Train losses are drawn thin (a moving average over --smooth steps), validation losses as
points joined by a line. Needs matplotlib (pip install matplotlib).
"""
import argparse
import csv
import sys


def read_curve(path):
    steps, train, val_steps, val = [], [], [], []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row or not row[0].strip().isdigit():
                continue  # a header, or an empty line
            step = int(row[0])
            steps.append(step)
            train.append(float(row[1]))
            if len(row) > 2 and row[2].strip():
                val_steps.append(step)
                val.append(float(row[2]))
    if not steps:
        sys.exit(f"plot_curves: {path} holds no step,train_loss[,val_loss] lines")
    return steps, train, val_steps, val


def moving_average(values, window):
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("curves", nargs="+", help="LABEL=FILE.csv")
    parser.add_argument("--out", required=True, help="the SVG (or PNG) to write")
    parser.add_argument("--smooth", type=int, default=50, help="steps in the train loss's moving average")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_curves: needs matplotlib (pip install matplotlib)")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, spec in enumerate(args.curves):
        label, sep, path = spec.partition("=")
        if not sep:
            sys.exit(f"plot_curves: '{spec}' is not LABEL=FILE.csv")
        steps, train, val_steps, val = read_curve(path)
        color = f"C{i}"
        # The CSVs hold a line every few steps: average over the lines that span --smooth steps.
        gap = max(1, (steps[-1] - steps[0]) // max(1, len(steps) - 1))
        ax.plot(steps, moving_average(train, max(1, args.smooth // gap)), color=color, linewidth=0.8, alpha=0.6,
                label=f"{label} train (mean of {args.smooth} steps)")
        if val:
            ax.plot(val_steps, val, color=color, marker="o", markersize=3, linewidth=1.5,
                    label=f"{label} validation (final {val[-1]:.4f})")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per byte)")
    if args.title:
        ax.set_title(args.title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"plot_curves: wrote {args.out}")


if __name__ == "__main__":
    main()
