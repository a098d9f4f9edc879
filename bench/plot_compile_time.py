#!/usr/bin/python3
"""bench/compile_time.csv (written by bench/compile_time.py) as bench/compile_time.png: distinct nodes
against user CPU seconds and against peak memory, both compilers, kiln's forward, its gradient and
hand-written Eigen, log x.
A compile stopped at the time limit is drawn as an open triangle at the limit (its true value is higher).

Needs matplotlib (Debian: apt-get install -y python3-matplotlib; run with /usr/bin/python3).
Usage: /usr/bin/python3 bench/plot_compile_time.py [compile_time.csv [compile_time.png]]
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

HERE = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "compile_time.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "compile_time.png")

with open(src) as f:
    rows = list(csv.DictReader(f))

fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
colors = {}
for compiler in dict.fromkeys(r["compiler"] for r in rows):
    colors[compiler] = f"C{len(colors)}"
style = {"kiln": "-", "grad": "--", "eigen": ":"}
label = {"kiln": "kiln", "grad": "kiln gradient", "eigen": "hand-written Eigen"}
codes = [c for c in style if any(r["code"] == c for r in rows)]

for compiler in colors:
    for code in codes:
        mine = sorted((r for r in rows if r["compiler"] == compiler and r["code"] == code), key=lambda r: int(r["nodes"]))
        done = [r for r in mine if r["status"] == "ok"]
        stopped = [r for r in mine if r["status"] == "timeout"]
        n = [int(r["nodes"]) for r in done]
        kw = dict(color=colors[compiler], linestyle=style[code], marker="o", label=f"{compiler}, {label[code]}")
        ax_t.plot(n, [float(r["user_s"]) for r in done], **kw)
        ax_m.plot(n, [float(r["peak_mb"]) for r in done], **kw)
        if stopped:
            ax_t.plot([int(r["nodes"]) for r in stopped], [float(r["wall_s"]) for r in stopped], linestyle="none",
                      marker="^", markerfacecolor="none", markersize=10, color=colors[compiler],
                      label=f"{compiler}, {label[code]}: stopped at the limit")

for ax, what in ((ax_t, "user CPU seconds"), (ax_m, "peak memory (MB)")):
    ax.set_xscale("log")
    ax.set_xlabel("distinct nodes in the graph")
    ax.set_ylabel(what)
    nodes = sorted({int(r["nodes"]) for r in rows})
    ax.set_xticks(nodes)
    ax.set_xticklabels([str(n) for n in nodes])
    ax.minorticks_off()
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
ax_t.set_title("compile time, -O2, one translation unit")
ax_m.set_title("compiler's peak memory")
ax_m.legend(fontsize=8, loc="upper left")
fig.tight_layout()
fig.savefig(dst, dpi=110)
print(f"wrote {dst}")
