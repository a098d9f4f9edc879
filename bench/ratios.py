#!/usr/bin/env python3
"""The Markdown tables of bench/RESULTS.md from Google Benchmark JSON files (one per benchmark binary).

Names follow one scheme in every bench_*.cpp: <workload>_<version>[/<argument>], with version `kiln`,
`kiln_<variant>` (another way to write the same function with kiln), `expert`, `stepwise`, or
`eigen_<name>` (another hand-written Eigen version worth knowing). Each kiln version becomes a row, divided
by the expert and step-by-step versions of its workload (same argument); the eigen_<name> versions are
listed under the table with kiln's time divided by theirs. Two more versions make other tables:
- `primal` (bench_grad, bench_scan): kiln::jit(f) beside `kiln` = jit(value_and_grad(f)), `kiln_grad` = jit(grad(f))
  and `expert` = the hand-derived gradient; the table shows g/p (kiln / primal) and kiln / analytic; other
  kiln versions (`kiln_<variant>`) are listed under it.
- `peer_<name>` (bench_jacobian): another library's derivative of the same function (Ceres' Jets, Eigen's
  AutoDiffScalar); the table shows each peer's time divided by kiln's (> 1: kiln is faster); other kiln
  versions (`kiln_jacfwd`) are listed under it.

Times are the median over repetitions (--benchmark_repetitions=N; aggregates only or not), or the single
run when there is no aggregate. By default the CPU time of the benchmark's thread: on a shared machine the
wall-clock time also counts the time other jobs held the core (--time real to use it anyway). The last
column is the coefficient of variation of the kiln and expert repetitions: a ratio within a few of those
percent of 1 is "the same speed".

Usage: ratios.py [--time cpu|real] out1.json [out2.json ...]
       (bench/run_benchmarks.sh writes the files and calls this)
"""
import argparse
import json
import os
import re
import sys

# How RESULTS.md names a workload; anything not listed is printed under its benchmark name.
LABELS = {
    "mlp": "MLP forward, batch 256, 64→128→10, tanh",
    "chain": "shared chain y = y*y + y, 20 levels, 1e5 elements",
    "elementwise/1000": "exp(-x·x)·y + 0.5·x, 1e3 elements",
    "elementwise/1000000": "exp(-x·x)·y + 0.5·x, 1e6 elements",
    "elementwise_sin/1000": "exp(-x·x)·sin(y) + 0.5·x, 1e3 elements (scalar sin)",
    "elementwise_sin/1000000": "exp(-x·x)·sin(y) + 0.5·x, 1e6 elements (scalar sin)",
    "elementwise_pow/1000": "pow(1 + x·x, p)·y, p a run-time scalar, 1e3 elements",
    "elementwise_pow/1000000": "pow(1 + x·x, p)·y, p a run-time scalar, 1e6 elements",
    "logsumexp_rows": "logsumexp along rows, 1000×100",
    "softmax_xent": "softmax cross-entropy, 1000×100, via log_softmax",
    "softmax_xent[lse]": "softmax cross-entropy, 1000×100, via x − logsumexp",
    "pose_residual": "3×3 pose residual of the oracle (fixed sizes)",
    "args/8": "10-leaf nested struct vs 10 flat tensors (expert column), 8×8 each",
    "args/128": "10-leaf nested struct vs 10 flat tensors (expert column), 128×128 each",
    # bench_grad: a workload with an argument is labelled "<label>, <name> = <argument>"
    "sum": ("sum(x)", "N"),
    "log_sum_exp": ("logsumexp(x)", "N"),
    "normal_log_pdf": ("normal log-pdf, d/d(x, mu, sigma)", "N"),
    "sum_matmul": ("sum(A·B), d/d(A, B), n×n", "n"),
    "blr": "Bayesian linear regression log-density, X 1000×150, d/d(w, sigma)",
    "mlp_loss": "MLP loss, batch 256, 64→128→10, tanh, MSE, d/d(parameters)",
    "cross_entropy": "softmax cross-entropy, logits 1000×100, soft targets, d/d(logits)",
    "stochastic_volatility": "stochastic volatility, T = 100 (log-depth scan), d/d(mu, phi, sigma, eta)",
    # bench_scan (kiln::scan)
    "rnn": ("RNN, hidden 32, input 8, d/d(W, U, b, v)", "T"),
    "sv": ("stochastic volatility as a kiln::scan recurrence, d/d(mu, phi, sigma, eta)", "T"),
    "step_overhead": ("scan of one scalar multiply-add, forward only (kiln column: jit(f))", "T"),
    # bench_jacobian
    "pose_gradient": "pose residual of the oracle, value and 1×12 gradient",
    "rat43": "NIST Rat43 residual, value and 1×4 Jacobian",
    "reprojection": "reprojection residual, value and 2×12 Jacobian",
    "pose_graph_edge": "2-D pose-graph edge, value and 3×6 Jacobian",
    # bench_train, bench_vmap ("[loop]": a loop of jit(f) over the 1000 examples)
    "train_step": "MLP training step, 512 two-moons points, 2→32→2, value_and_grad + Adam",
    "mlp_score": "vmap: per-row MLP score, 1000×32 → 32, tanh",
    "mlp_score[loop]": "loop of jit(f): per-row MLP score, tanh",
    "mlp_score_relu": "vmap: per-row MLP score, ReLU",
    "mlp_score_relu[loop]": "loop of jit(f): per-row MLP score, ReLU",
    "logistic_grads": "vmap(grad): per-example logistic gradients, 1000×32",
    "logistic_grads[loop]": "loop of jit(grad(f)): per-example logistic gradients",
    "log_softmax": "vmap: log_softmax of 1000 rows of 100",
    "log_softmax[loop]": "loop of jit(f): log_softmax of 1000 rows of 100",
}
PEERS = {"ceres": "Ceres Jets", "ceres_cost": "Ceres AutoDiffCostFunction", "autodiffscalar": "Eigen AutoDiffScalar"}
VERSION = re.compile(r"^(?P<workload>.+?)_(?P<version>(?:kiln|eigen|peer)(?:_(?P<variant>\w+))?|expert|stepwise|primal)$")
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load(path, which):
    """{benchmark name: (median ns, cv or None)} and the binary's name, from one JSON file."""
    with open(path) as f:
        text = f.read()
    if not text.strip():  # Google Benchmark leaves the file empty when a filter matched nothing in it
        return os.path.basename(path), {}
    doc = json.loads(text)
    medians, singles, cvs = {}, {}, {}
    for r in doc.get("benchmarks", []):
        name = r.get("run_name", r["name"])
        if r.get("error_occurred"):
            sys.exit(f"ratios.py: {path}: {name} failed: {r.get('error_message', '')}")
        kind = r.get("run_type")
        if kind == "aggregate":
            agg = r.get("aggregate_name")
            if agg == "median":
                medians[name] = r[which] * UNIT_NS[r["time_unit"]]
            elif agg == "cv":
                cvs[name] = r[which]  # a fraction, no unit
        elif name not in singles:
            singles[name] = r[which] * UNIT_NS[r["time_unit"]]
    times = {n: (medians.get(n, t), cvs.get(n)) for n, t in {**singles, **medians}.items()}
    binary = os.path.basename(doc.get("context", {}).get("executable", path))
    return binary, times


def split(name):
    """'softmax_xent_kiln_lse' -> ('softmax_xent', 'kiln', 'lse', ''); 'elementwise_kiln/1000' -> (..., '/1000')."""
    head, _, arg = name.partition("/")
    m = VERSION.match(head)
    if not m:
        return None
    return m["workload"], m["version"].split("_")[0], m["variant"] or "", "/" + arg if arg else ""


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} us"
    return f"{ns:.0f} ns"


def fmt_ratio(a, b):
    return f"{a / b:.3f}" if a is not None and b is not None else "—"


def label(workload, arg):
    """How RESULTS.md names a workload (and argument)."""
    got = LABELS.get(workload + arg, LABELS.get(workload))
    if got is None:
        return workload + arg
    if isinstance(got, tuple):
        return f"{got[0]}, {got[1]} = {arg[1:]}" if arg else got[0]
    return got + (f", {arg[1:]}" if arg else "")


def fmt_cv(*cvs):
    shown = [f"{100 * c:.0f}%" for c in cvs if c is not None]
    return " / ".join(shown) if shown else "—"


def table(times):
    rows, notes = [], []
    for name, (ns, cv) in times.items():
        parts = split(name)
        if parts and parts[1] == "eigen":
            workload, _, variant, arg = parts
            kiln = times.get(f"{workload}_kiln{arg}", (None, None))[0]
            notes.append(f"- {LABELS.get(workload + arg, workload + arg)}: Eigen version `{variant}` "
                         f"{fmt_time(ns)} (kiln / it = {fmt_ratio(kiln, ns)}, cv {fmt_cv(cv)})")
        if not parts or parts[1] != "kiln":
            continue
        workload, _, variant, arg = parts
        expert = times.get(f"{workload}_expert{arg}", (None, None))
        stepwise = times.get(f"{workload}_stepwise{arg}", (None, None))
        key = workload + arg + (f"[{variant}]" if variant else "")
        label = LABELS.get(key, key)
        rows.append(f"| {label} | {fmt_time(ns)} | {fmt_time(expert[0])} | {fmt_time(stepwise[0])} | "
                    f"{fmt_ratio(ns, expert[0])} | {fmt_ratio(ns, stepwise[0])} | {fmt_cv(cv, expert[1])} |")
    head = ("| workload | kiln | expert Eigen | step-by-step Eigen | kiln / expert | kiln / step-by-step | "
            "spread (cv kiln / expert) |\n|---|---|---|---|---|---|---|")
    return "\n".join([head] + rows + ([""] + notes if notes else []))


def grad_table(times):
    """bench_grad: per workload, value_and_grad, grad and the primal by kiln, and the analytic gradient."""
    rows, notes = [], []
    get = lambda name: times.get(name, (None, None))
    for name, (ns, cv) in times.items():
        parts = split(name)
        if not parts:
            continue
        workload, kind, variant, arg = parts
        if kind == "eigen":
            kiln = get(f"{workload}_kiln{arg}")[0]
            notes.append(f"- {label(workload, arg)}: Eigen version `{variant}` {fmt_time(ns)} "
                         f"(kiln / it = {fmt_ratio(kiln, ns)}, cv {fmt_cv(cv)})")
        if kind == "kiln" and variant and variant != "grad":  # another way to write f with kiln
            base, expert = get(f"{workload}_kiln{arg}")[0], get(f"{workload}_expert{arg}")[0]
            notes.append(f"- {label(workload, arg)}: kiln version `{variant}` {fmt_time(ns)} "
                         f"(it / analytic = {fmt_ratio(ns, expert)}, kiln / it = {fmt_ratio(base, ns)}, cv {fmt_cv(cv)})")
        if kind != "kiln" or variant:
            continue
        grad, primal, expert = get(f"{workload}_kiln_grad{arg}"), get(f"{workload}_primal{arg}"), get(f"{workload}_expert{arg}")
        rows.append(f"| {label(workload, arg)} | {fmt_time(ns)} | {fmt_time(grad[0])} | {fmt_time(primal[0])} | "
                    f"{fmt_time(expert[0])} | {fmt_ratio(ns, primal[0])} | {fmt_ratio(grad[0], primal[0])} | "
                    f"{fmt_ratio(ns, expert[0])} | {fmt_cv(cv, primal[1], expert[1])} |")
    head = ("| workload | kiln value_and_grad | kiln grad | kiln primal | analytic Eigen | g/p | g/p (grad only) | "
            "kiln / analytic | spread (cv kiln / primal / analytic) |\n|---|---|---|---|---|---|---|---|---|")
    return "\n".join([head] + rows + ([""] + notes if notes else []))


def peer_table(times):
    """bench_jacobian: kiln, the hand-written Jacobian and each peer, with the peers' time over kiln's."""
    peers = list(dict.fromkeys(p[2] for p in map(split, times) if p and p[1] == "peer"))
    rows, notes = [], []
    get = lambda name: times.get(name, (None, None))
    for name, (ns, cv) in times.items():
        parts = split(name)
        if parts and parts[1] == "kiln" and parts[2]:  # another way to ask kiln for it (jacfwd)
            workload, _, variant, arg = parts
            base, expert = get(f"{workload}_kiln{arg}")[0], get(f"{workload}_expert{arg}")[0]
            notes.append(f"- {label(workload, arg)}: kiln version `{variant}` {fmt_time(ns)} (it / hand-written = "
                         f"{fmt_ratio(ns, expert)}, kiln / it = {fmt_ratio(base, ns)}, cv {fmt_cv(cv)})")
        if not parts or parts[1] != "kiln" or parts[2]:
            continue
        workload, _, _, arg = parts
        expert = get(f"{workload}_expert{arg}")
        theirs = [get(f"{workload}_peer_{p}{arg}")[0] for p in peers]
        rows.append(f"| {label(workload, arg)} | {fmt_time(ns)} | {fmt_time(expert[0])} | "
                    + " | ".join(fmt_time(t) for t in theirs) + f" | {fmt_ratio(ns, expert[0])} | "
                    + " | ".join(fmt_ratio(t, ns) for t in theirs) + f" | {fmt_cv(cv, expert[1])} |")
    names = [PEERS.get(p, p) for p in peers]
    head = ("| workload | kiln | hand-written | " + " | ".join(names) + " | kiln / hand-written | "
            + " | ".join(f"{n} / kiln" for n in names) + " | spread (cv kiln / hand-written) |\n|"
            + "---|" * (5 + 2 * len(names)))
    return "\n".join([head] + rows + ([""] + notes if notes else []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", choices=["cpu", "real"], default="cpu", help="which time to compare (default: cpu)")
    ap.add_argument("json", nargs="+", help="Google Benchmark JSON files (--benchmark_out_format=json)")
    args = ap.parse_args()
    which = "cpu_time" if args.time == "cpu" else "real_time"
    for path in args.json:
        binary, times = load(path, which)
        if not times:
            continue
        print(f"### `{binary}` ({args.time} time, median)\n")
        kinds = {p[1] for p in map(split, times) if p}
        print(grad_table(times) if "primal" in kinds else peer_table(times) if "peer" in kinds else table(times))
        print()


if __name__ == "__main__":
    main()
