"""Print a benchmark table as aligned text or as Markdown (bench/compare_*.py share it)."""


def print_table(head, lines, markdown):
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for l in lines:
            print("| " + " | ".join(l) + " |")
        return
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for l in lines:
        print("  ".join(c.ljust(w) for c, w in zip(l, widths)))
