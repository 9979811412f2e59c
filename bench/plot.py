#!/usr/bin/env python3
"""plot.py CPU_CSV COMPILE_CSV OUT_PNG: the CPU and compile benchmarks as one PNG.
plot.py --gpu GPU_CSV PEERS_CSV OUT_PNG: the GPU benchmarks as one PNG.

Requires: matplotlib (bench/run.sh skips the plot without it); the CSV files
bench_cpu --csv and bench_compile --csv write. Produces OUT_PNG: left, kern's
time relative to the C baselines per workload (log scale, 1 = the same speed);
right, compile latency of the runtime against the compiler alone. With
--gpu (bench_gpu --csv and bench/peers.py's CSV): kern's speed relative to
hand-written CUDA and to each peer per workload (1 = the same speed, higher
= kern faster), and beside it kern_array_matmul against cuBLAS and Triton
(the gemm_* rows). Breaks: nothing (a missing second CSV leaves its part out).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def ratios_panel(ax, rows):
    names = [f"{r['workload']}\n{r['size']}" for r in rows]
    pth = [float(r["kern_over_pthreads"]) for r in rows]
    one = [float(r["kern_over_single"]) for r in rows]
    threads = rows[0]["threads"] if rows else "?"
    x = range(len(rows))
    w = 0.38
    ax.bar([i - w / 2 for i in x], pth, w, label=f"kern / C on {threads} pthreads")
    ax.bar([i + w / 2 for i in x], one, w, label="kern / C on 1 thread")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("time ratio (lower is better for kern)")
    ax.set_title("CPU kernels: kern vs hand-written C")
    for i, v in enumerate(pth):
        ax.annotate(f"{v:.3g}", (i - w / 2, v), ha="center", va="bottom", fontsize=7)
    ax.legend(fontsize=8)


def compile_panel(ax, rows):
    rows = [r for r in rows if r["kern_ms"]]
    names = [r["what"].replace(" (", "\n(").replace(", ", ",\n", 1) for r in rows]
    kern = [float(r["kern_ms"]) for r in rows]
    floor = [float(r["floor_ms"]) if r["floor_ms"] else 0.0 for r in rows]
    y = range(len(rows))
    h = 0.38
    ax.barh([i - h / 2 for i in y], kern, h, label="kern")
    ax.barh([i + h / 2 for i in y], floor, h, label="floor: the compiler alone")
    ax.set_xscale("log")
    ax.set_yticks(list(y))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds (log)")
    ax.set_title("Compile latency, 10-kernel module")
    ax.legend(fontsize=8)


def gpu_panel(ax, rows, peers):
    names = [f"{r['workload']}\n{r['size']}" for r in rows]
    # rows without a CUDA baseline (the sorts: their peers are CuPy's and PyTorch's) get no CUDA bar
    series = [("hand-written CUDA (nvcc)", [float(r["speed_vs_cuda"] or 0) for r in rows])]
    for peer in dict.fromkeys(p["peer"] for p in peers):
        by = {p["workload"]: float(p["kern_speed_vs_peer"]) for p in peers if p["peer"] == peer}
        series.append((peer, [by.get(r["workload"], 0.0) for r in rows]))
    x = range(len(rows))
    w = 0.8 / len(series)
    for k, (label, vals) in enumerate(series):
        off = (k - (len(series) - 1) / 2) * w
        ax.bar([i + off for i in x], [v if v > 0 else float("nan") for v in vals], w, label=f"vs {label}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    fmt = matplotlib.ticker.FormatStrFormatter("%.2g")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(fmt)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_ylabel("kern speed relative to the baseline (higher: kern faster)")
    ax.set_title("GPU kernels: kern vs hand-written CUDA and peers")
    ax.legend(fontsize=8)


def is_gemm(row):
    """A kern_array_matmul row (bench_gpu's gemm_<mode>_<n>), drawn in a panel of its own."""
    return row["workload"].startswith("gemm_")


def matmul_panel(ax, rows, peers):
    """kern_array_matmul's speed against cuBLAS and Triton per mode and size (the gemm_* rows)."""
    names = [f"{r['workload'][len('gemm_'):].replace('_', ' ')}" for r in rows]
    x = range(len(rows))
    labels = dict.fromkeys(p["peer"] for p in peers if is_gemm(p))
    w = 0.8 / max(1, len(labels))
    for k, peer in enumerate(labels):
        by = {p["workload"]: float(p["kern_speed_vs_peer"]) for p in peers if p["peer"] == peer}
        off = (k - (len(labels) - 1) / 2) * w
        vals = [by.get(r["workload"], float("nan")) for r in rows]
        ax.bar([i + off for i in x], vals, w, label=f"vs {peer}")
        for i, v in enumerate(vals):
            if v == v:
                ax.annotate(f"{v:.2f}", (i + off, v), ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle="--", label="FAST target vs cuBLAS (0.5)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("kern speed relative to the peer (higher: kern faster)")
    ax.set_title("kern_array_matmul vs cuBLAS and Triton tl.dot")
    ax.legend(fontsize=8)


def main_gpu(argv):
    rows = read(argv[2])
    peers = read(argv[3]) if os.path.exists(argv[3]) else []
    gemm = [r for r in rows if is_gemm(r)]
    rows = [r for r in rows if not is_gemm(r)]
    fig, axes = plt.subplots(1, 2 if gemm else 1, figsize=(18 if gemm else 11, 6),
                             gridspec_kw={"width_ratios": [3, 2]} if gemm else None)
    ax = axes[0] if gemm else axes
    gpu_panel(ax, rows, [p for p in peers if not is_gemm(p)])
    if gemm:
        matmul_panel(axes[1], gemm, peers)
    host = os.path.basename(argv[2])[len("gpu-"):-len(".csv")]
    fig.suptitle(f"kern GPU benchmarks on {host}")
    fig.tight_layout()
    fig.savefig(argv[4], dpi=110)
    print(f"plot: {argv[4]}")


def main(argv):
    if len(argv) == 5 and argv[1] == "--gpu":
        return main_gpu(argv)
    if len(argv) != 4:
        sys.exit("usage: plot.py CPU_CSV COMPILE_CSV OUT_PNG")
    cpu = read(argv[1])
    comp = read(argv[2]) if os.path.exists(argv[2]) else []
    fig, axes = plt.subplots(1, 2 if comp else 1, figsize=(15 if comp else 8, 6))
    axes = list(axes) if comp else [axes]
    ratios_panel(axes[0], cpu)
    if comp:
        compile_panel(axes[1], comp)
    host = os.path.basename(argv[1])[len("cpu-"):-len(".csv")]
    fig.suptitle(f"kern benchmarks on {host}")
    fig.tight_layout()
    fig.savefig(argv[3], dpi=110)
    print(f"plot: {argv[3]}")


if __name__ == "__main__":
    main(sys.argv)
