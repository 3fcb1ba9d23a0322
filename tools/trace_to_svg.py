#!/usr/bin/env python3
"""Draws gradring Chrome traces (one JSON file per rank) as an SVG timeline, for docs.

Each rank gets three rows: compute (forward, backward ops, DDP's end-of-backward wait),
bucket gradients (first gradient ready .. bucket ready) and comm (each bucket's all-reduce,
launch .. reduced). A window of the trace is drawn: by default the last complete
iteration's forward start to its wait end on the first rank.

A fully_shard trace (FSDPModule::write_chrome_trace, bench_ddp --modes fsdp --trace) gets four
rows: compute (the ops and FSDP's waits), units (each unit's forward and backward), all-gather
(each gather, issue .. done) and reduce-scatter; the window is the root's forward start to the
end of its "FSDP end of backward".

Usage: tools/trace_to_svg.py rank0.json rank1.json ... -o picture.svg
       [--iteration K]  (which "DDP forward" span starts the window; default: the last one)
       [--width PX]
"""
import argparse
import json
import sys

COLORS = {"forward": "#4e79a7", "ddp": "#f28e2b", "backward": "#59a14f", "kernel": "#9c9c9c",
          "comm": "#e15759", "step": "#bab0ac", "module": "#76b7b2", "fsdp": "#f28e2b"}


def load(path):
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"trace_to_svg: cannot read trace {path}: {e}")
    name, threads, spans = path, {}, []
    for e in events:
        if e.get("ph") == "M":
            if e.get("name") == "process_name":
                name = e["args"]["name"]
            elif e.get("name") == "thread_name":
                threads[e["tid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            spans.append(e)
    return name, threads, spans


def row_of(span, threads):
    track = threads.get(span["tid"])
    if track in ("comm", "fsdp all-gather"):
        return 2
    if track in ("buckets", "fsdp units"):
        return 1
    if track == "fsdp reduce-scatter":
        return 3
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--iteration", type=int, default=-1)
    ap.add_argument("--width", type=int, default=1100)
    a = ap.parse_args()
    ranks = [load(p) for p in a.traces]
    fsdp = any(s["name"] == "forward root" for s in ranks[0][2])
    start, end = ("forward root", "FSDP end of backward") if fsdp else ("DDP forward", "DDP wait")
    forwards = sorted(s["ts"] for s in ranks[0][2] if s["name"] == start)
    waits = sorted(s["ts"] + s["dur"] for s in ranks[0][2] if s["name"] == end)
    if not forwards or not waits:
        sys.exit("trace_to_svg: the first trace has no 'DDP forward' / 'DDP wait' spans, nor fully_shard's "
                 "'forward root' / 'FSDP end of backward' (was it a DDP or fully_shard run with the profiler on?)")
    k = a.iteration if a.iteration >= 0 else len(forwards) - 1
    if k >= len(forwards):
        sys.exit(f"trace_to_svg: --iteration {k}: the trace has {len(forwards)} iterations")
    t0 = forwards[k]
    ends = [w for w in waits if w > t0]
    if not ends:
        sys.exit(f"trace_to_svg: iteration {k} has no end-of-backward wait")
    t1 = ends[0]
    pad = (t1 - t0) * 0.02
    t0, t1 = t0 - pad, t1 + pad
    left, row_h, gap = 150, 22, 14
    scale = (a.width - left - 20) / (t1 - t0)
    labels = ["compute", "units", "all-gather", "reduce-scatter"] if fsdp else ["compute", "bucket gradients", "all-reduce"]
    rows = len(labels)
    height = 40 + len(ranks) * (rows * row_h + gap) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{a.width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="13">{"fully_shard" if fsdp else "DDP"} iteration {k}: '
           f'{(t1 - t0) / 1000:.2f} ms shown (forward start to end-of-backward wait on {ranks[0][0]})</text>']
    y = 40
    for name, threads, spans in ranks:
        out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{name}</text>')
        for r, label in enumerate(labels):
            out.append(f'<text x="40" y="{y + r * row_h + 26}" fill="#555">{label}</text>')
            out.append(f'<line x1="{left}" y1="{y + (r + 1) * row_h + 12}" x2="{a.width - 20}" '
                       f'y2="{y + (r + 1) * row_h + 12}" stroke="#eee"/>')
        unit_spans = [u for u in spans if row_of(u, threads) == 1 and not u["name"].endswith(" root")]
        # Longest first: a span enclosing others (a unit's forward around its children's) is
        # drawn under them.
        for s in sorted(spans, key=lambda s: -s["dur"]):
            b, e = s["ts"], s["ts"] + s["dur"]
            if e < t0 or b > t1:
                continue
            r = row_of(s, threads)
            if r == 0 and s.get("cat") == "kernel":
                continue  # kernels sit inside their backward / forward spans
            if r == 1 and fsdp and s["name"].endswith(" root"):
                continue  # the root's spans enclose every other unit's
            x = left + (max(b, t0) - t0) * scale
            w = max(0.8, (min(e, t1) - max(b, t0)) * scale)
            color = COLORS.get(s.get("cat"), "#bbbbbb")
            title = f'{s["name"]} ({s["dur"] / 1000:.3f} ms)'
            # fully_shard's unit spans nest (a unit's forward encloses the units it calls): each
            # level is drawn 3 px shorter, so the children show inside their parent.
            inset = 3 * sum(1 for o in unit_spans if o is not s and o["ts"] <= b and o["ts"] + o["dur"] >= e
                            and o["dur"] > s["dur"]) if fsdp and r == 1 else 0
            if fsdp and r == 1 and inset == 0:
                color = "#f9c28b"  # an outer unit (the GPT around its blocks) in a lighter shade
            out.append(f'<rect x="{x:.1f}" y="{y + r * row_h + 14 + inset}" width="{w:.1f}" height="{max(4, row_h - 4 - inset)}" '
                       f'fill="{color}" stroke="white" stroke-width="0.6"><title>{title}</title></rect>')
            if w > 60:
                out.append(f'<text x="{x + 3:.1f}" y="{y + r * row_h + 28}" fill="white">{s["name"][:int(w / 6)]}</text>')
        y += rows * row_h + gap
    # time axis
    raw = (t1 - t0) / 10  # about ten ticks, on a 1-2-5 grid (microseconds)
    step = 1
    while step * 5 < raw:
        step *= 10
    step = next(m * step for m in (1, 2, 5, 10) if m * step >= raw)
    origin = t0 + pad  # the iteration's forward start
    tick = origin
    while tick < t1:
        x = left + (tick - t0) * scale
        out.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 5}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{y + 17}" text-anchor="middle">{(tick - origin) / 1000:g} ms</text>')
        tick += step
    legend = [("forward", "DDP forward"), ("backward", "backward ops"), ("ddp", "bucket filling / DDP wait"),
              ("comm", "bucket all-reduce")]
    if fsdp:
        legend = [("backward", "backward ops"), ("fsdp", "unit forward / backward, FSDP waits"),
                  ("comm", "all-gather / reduce-scatter")]
    x = left
    for cat, text in legend:
        out.append(f'<rect x="{x}" y="{y + 24}" width="12" height="10" fill="{COLORS[cat]}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 33}">{text}</text>')
        x += 40 + 7 * len(text)
    out.append("</svg>")
    with open(a.output, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"trace_to_svg: wrote {a.output} ({len(ranks)} rank(s), iteration {k})")


if __name__ == "__main__":
    main()
