#!/usr/bin/env python3
"""Ratios from a Google Benchmark JSON file: for each workload W with benchmarks W_kiln, W_expert and
W_stepwise, print a Markdown row with the times and kiln/expert, kiln/stepwise.
Usage: bench_forward --benchmark_format=json --benchmark_repetitions=5 > out.json; ratios.py out.json"""
import json
import sys

runs = json.load(open(sys.argv[1]))["benchmarks"]
# Median over repetitions when present, else the single run.
times = {}
for r in runs:
    if r.get("run_type") == "aggregate" and r.get("aggregate_name") != "median":
        continue
    name = r.get("run_name", r["name"])
    if r.get("run_type") == "aggregate" or name not in times:
        times[name] = r["real_time"] if r["time_unit"] == "ns" else r["real_time"] * {"us": 1e3, "ms": 1e6, "s": 1e9}[r["time_unit"]]

workloads = sorted({n.rsplit("_", 1)[0] for n in times if n.endswith("_kiln")})
print("| workload | kiln | expert Eigen | step-by-step Eigen | kiln / expert | kiln / step-by-step |")
print("|---|---|---|---|---|---|")
fmt = lambda ns: f"{ns / 1e3:.1f} us" if ns >= 1e3 else f"{ns:.0f} ns"
for w in workloads:
    k, e, s = times.get(w + "_kiln"), times.get(w + "_expert"), times.get(w + "_stepwise")
    print(f"| {w} | {fmt(k)} | {fmt(e)} | {fmt(s)} | {k / e:.3f} | {k / s:.3f} |")
