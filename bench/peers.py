#!/usr/bin/env python3
"""peers.py KERN_CSV OUT_MD OUT_CSV: the GPU workloads of bench/bench_gpu.c
written with CuPy and Triton, timed the same way, beside kern's times.

Requires: the CSV that bench_gpu wrote in the same run (`--csv`), and CuPy
and/or Triton (with PyTorch for its tensors); a peer that is not installed
gets a line saying so. Produces: a Markdown table (OUT_MD) and a CSV
(OUT_CSV). Breaks: nothing; exits 1 when a peer's result differs from the
reference (the hand-written CUDA of bench/baseline.cu, run through CuPy)
before anything is timed.

Sizes and inputs' ranges are bench_gpu's. CuPy runs bench/baseline.cu as
RawKernels (compiled by NVRTC with --fmad=false, as kern compiles) and saxpy
and tiny also as ElementwiseKernels. Triton runs the workloads it can express:
its matmul is tiled (tl.dot in full fp32 precision) and its mandelbrot
iterates every pixel maxit times under a mask (Triton has no per-lane early
exit), so those two are not the same algorithm and are marked so.
Each run is timed from the first launch to the end of a device synchronize;
medians of 15 runs. A last table sets kern_array_sort (the CSV's rows sort and
sort_pairs) beside CUB's radix sort through CuPy (cupy.sort of the keys,
cupy.argsort for keys with their places) and PyTorch (torch.sort(stable=True),
keys with int64 places), on the same 64M uint32 keys; one sets
kern_array_sum and kern_array_scan (the CSV's rows array_sum and array_scan)
beside cupy.sum and cupy.cumsum, torch.sum and torch.cumsum, and Warp's
wp.utils.array_sum and array_scan where Warp is installed, on 256M float32;
and another sets
kern_array_matmul (the CSV's gemm_* rows) beside cuBLAS (torch.matmul) and a
tiled Triton kernel (tl.dot, the fastest of a few block shapes) at 2048^3 and
4096^3 in each of its modes.
"""
import csv
import os
import statistics
import sys
import time

import numpy as np

REPS = 15
HERE = os.path.dirname(os.path.abspath(__file__))


def median_time(fn, sync, launches=1):
    fn(), sync()
    ts = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        for _ in range(launches):
            fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def close(name, got, want, tol=0.0, frac=0.0):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    bad = ~(np.abs(got - want) <= tol * np.maximum(1.0, np.abs(want)))
    if bad.mean() > frac:
        i = int(np.argmax(bad))
        sys.exit(f"peers.py: {name}: differs from the CUDA reference at {i}: {got.flat[i]} vs {want.flat[i]}")


def hash32(n, seed):
    """bench_gpu's 32-bit hash of i + seed, for i < n (as uint64)."""
    x = (np.arange(n, dtype=np.uint64) + seed) & 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def unit(n, seed, lo=0.0):
    """bench_gpu's input generator (a 32-bit hash of i + seed)."""
    x = hash32(n, seed)
    return (lo + (x >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)).astype(np.float32)


SIZES = dict(saxpy=1 << 28, stencil=8192, histogram=1 << 26, matmul=2048, nbody=32768, mandelbrot=4096,
             reduce=1 << 28, tiny=64)
NBINS, CHUNK, MAXIT, TINY = 1024, 256, 256, 1000


def inputs():
    n = SIZES
    return dict(
        saxpy=(unit(n["saxpy"], 0), unit(n["saxpy"], 1 << 30)),
        stencil=unit(n["stencil"] ** 2, 7).reshape(n["stencil"], n["stencil"]),
        histogram=(unit(n["histogram"], 0) * np.float32(1000003.0)).astype(np.int32),
        matmul=(unit(n["matmul"] ** 2, 3, -0.5), unit(n["matmul"] ** 2, 5 << 24, -0.5)),
        nbody=(unit(3 * n["nbody"], 11, -0.5), unit(3 * n["nbody"], 13 << 20, -0.5), unit(n["nbody"], 17 << 22, 0.5)),
        reduce=unit(n["reduce"], 19),
    )


# ---- CuPy: the baseline's kernels as RawKernels (also the reference) --------------------------

def cupy_runs(cp, inp):
    src = open(os.path.join(HERE, "baseline.cu")).read()
    mod = cp.RawModule(code=src, options=("--fmad=false",))
    k = {name: mod.get_function(name) for name in
         ("saxpy", "stencil", "histogram", "matmul", "nbody", "mandelbrot", "reduce_sum", "tiny")}
    sync = cp.cuda.Device().synchronize
    g1 = lambda n: ((n + 255) // 256,)
    g2 = lambda r, c: ((c + 15) // 16, (r + 15) // 16)
    out, times = {}, {}

    n = SIZES["saxpy"]
    x, y0 = cp.asarray(inp["saxpy"][0]), cp.asarray(inp["saxpy"][1])
    y = y0.copy()
    k["saxpy"](g1(n), (256,), (x, y, np.float32(2), np.int64(n)))
    out["saxpy"] = y.get()
    times["saxpy"] = median_time(lambda: k["saxpy"](g1(n), (256,), (x, y, np.float32(2), np.int64(n))), sync)
    ek = cp.ElementwiseKernel("float32 x, float32 a", "float32 y", "y = a * x + y", "kern_peer_saxpy",
                              options=("--fmad=false",))
    y = y0.copy()
    ek(x, np.float32(2), y)
    close("saxpy (CuPy ElementwiseKernel)", y.get(), out["saxpy"])
    times["saxpy elementwise"] = median_time(lambda: ek(x, np.float32(2), y), sync)
    del x, y, y0

    s = SIZES["stencil"]
    src_, dst = cp.asarray(inp["stencil"]), cp.zeros((s, s), cp.float32)
    run = lambda: k["stencil"](g2(s - 2, s - 2), (16, 16), (src_, dst, np.int32(s), np.int32(s)))
    run()
    out["stencil"] = dst.get()
    times["stencil"] = median_time(run, sync)
    del src_, dst

    v, bins = cp.asarray(inp["histogram"]), cp.zeros(NBINS, cp.int32)
    n = SIZES["histogram"]
    run = lambda: k["histogram"](g1(n), (256,), (v, bins, np.int32(NBINS), np.int64(n)))
    run()
    out["histogram"] = bins.get()
    times["histogram"] = median_time(run, sync)
    del v, bins

    m = SIZES["matmul"]
    a, b = (cp.asarray(t) for t in inp["matmul"])
    c = cp.zeros(m * m, cp.float32)
    run = lambda: k["matmul"](g2(m, m), (16, 16), (a, b, c, np.int32(m)))
    run()
    out["matmul"] = c.get()
    times["matmul"] = median_time(run, sync)
    del a, b, c

    nb = SIZES["nbody"]
    p, vel, mass = (cp.asarray(t) for t in inp["nbody"])
    po, vo = cp.zeros(3 * nb, cp.float32), cp.zeros(3 * nb, cp.float32)
    run = lambda: k["nbody"](g1(nb), (256,), (p, vel, mass, po, vo, np.float32(0.01), np.int32(nb)))
    run()
    out["nbody"] = vo.get()
    times["nbody"] = median_time(run, sync)
    del p, vel, mass, po, vo

    r = SIZES["mandelbrot"]
    o = cp.zeros((r, r), cp.int32)
    run = lambda: k["mandelbrot"](g2(r, r), (16, 16), (o, np.int32(r), np.int32(r), np.int32(MAXIT)))
    run()
    out["mandelbrot"] = o.get()
    times["mandelbrot"] = median_time(run, sync)
    del o

    n = SIZES["reduce"]
    x, total = cp.asarray(inp["reduce"]), cp.zeros(1, cp.float64)
    run = lambda: k["reduce_sum"](g1(n // CHUNK), (256,), (x, total, np.int64(n // CHUNK)))
    run()
    out["reduce"] = total.get()
    times["reduce"] = median_time(run, sync)
    del x, total

    t = cp.zeros(SIZES["tiny"], cp.float32)
    times["tiny"] = median_time(lambda: k["tiny"]((1,), (64,), (t, np.int64(64))), sync, TINY) / TINY
    ek1 = cp.ElementwiseKernel("", "float32 x", "x = x + 1.0f", "kern_peer_tiny")
    times["tiny elementwise"] = median_time(lambda: ek1(t), sync, TINY) / TINY
    return out, times


# ---- Triton ---------------------------------------------------------------------------------

def triton_runs(ref, inp):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def saxpy(x, y, a, n, B: tl.constexpr):
        i = tl.program_id(0) * B + tl.arange(0, B)
        m = i < n
        tl.store(y + i, a * tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

    @triton.jit
    def stencil(src, dst, rows, cols, B: tl.constexpr):
        i = tl.program_id(1) + 1
        j = tl.program_id(0) * B + tl.arange(0, B) + 1
        m = j < cols - 1
        c = i.to(tl.int64) * cols + j
        s = tl.load(src + c, mask=m) + tl.load(src + c - cols, mask=m) + tl.load(src + c + cols, mask=m)
        s = s + tl.load(src + c - 1, mask=m) + tl.load(src + c + 1, mask=m)
        tl.store(dst + c, 0.2 * s, mask=m)

    @triton.jit
    def histogram(v, bins, nbins, n, B: tl.constexpr):
        i = tl.program_id(0) * B + tl.arange(0, B)
        m = i < n
        tl.atomic_add(bins + tl.load(v + i, mask=m) % nbins, 1, mask=m)

    @triton.jit
    def matmul(a, b, c, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, n, BK):
            x = tl.load(a + rm[:, None] * n + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * n + rn[None, :])
            acc += tl.dot(x, y, input_precision="ieee")
        tl.store(c + rm[:, None] * n + rn[None, :], acc)

    @triton.jit
    def nbody(pos, vel, mass, po, vo, dt, n, BI: tl.constexpr, BJ: tl.constexpr):
        i = tl.program_id(0) * BI + tl.arange(0, BI)
        px, py, pz = tl.load(pos + 3 * i), tl.load(pos + 3 * i + 1), tl.load(pos + 3 * i + 2)
        ax = tl.zeros((BI,), tl.float32)
        ay = tl.zeros((BI,), tl.float32)
        az = tl.zeros((BI,), tl.float32)
        for j0 in range(0, n, BJ):
            j = j0 + tl.arange(0, BJ)
            dx = tl.load(pos + 3 * j)[None, :] - px[:, None]
            dy = tl.load(pos + 3 * j + 1)[None, :] - py[:, None]
            dz = tl.load(pos + 3 * j + 2)[None, :] - pz[:, None]
            inv = 1.0 / tl.sqrt_rn(dx * dx + dy * dy + dz * dz + 0.01)
            s = tl.load(mass + j)[None, :] * inv * inv * inv
            ax += tl.sum(dx * s, axis=1)
            ay += tl.sum(dy * s, axis=1)
            az += tl.sum(dz * s, axis=1)
        vx = tl.load(vel + 3 * i) + ax * dt
        vy = tl.load(vel + 3 * i + 1) + ay * dt
        vz = tl.load(vel + 3 * i + 2) + az * dt
        tl.store(vo + 3 * i, vx)
        tl.store(vo + 3 * i + 1, vy)
        tl.store(vo + 3 * i + 2, vz)
        tl.store(po + 3 * i, px + vx * dt)
        tl.store(po + 3 * i + 1, py + vy * dt)
        tl.store(po + 3 * i + 2, pz + vz * dt)

    @triton.jit
    def mandelbrot(out, rows, cols, maxit, B: tl.constexpr):
        i = tl.program_id(1)
        j = tl.program_id(0) * B + tl.arange(0, B)
        x0 = -2.0 + 3.0 * j.to(tl.float32) / cols
        y0 = -1.5 + 3.0 * i.to(tl.float32) / rows
        x = tl.zeros((B,), tl.float32)
        y = tl.zeros((B,), tl.float32)
        it = tl.zeros((B,), tl.int32)
        for _ in range(0, maxit):
            live = x * x + y * y <= 4.0
            xt = x * x - y * y + x0
            y = tl.where(live, 2.0 * x * y + y0, y)
            x = tl.where(live, xt, x)
            it += live.to(tl.int32)
        tl.store(out + i * cols + j, it, mask=j < cols)

    @triton.jit
    def reduce_sum(x, total, B: tl.constexpr):
        i = tl.program_id(0) * B + tl.arange(0, B)
        tl.atomic_add(total, tl.sum(tl.load(x + i), axis=0).to(tl.float64))

    @triton.jit
    def tiny(x, n, B: tl.constexpr):
        i = tl.arange(0, B)
        m = i < n
        tl.store(x + i, tl.load(x + i, mask=m) + 1.0, mask=m)

    dev = "cuda"
    sync = torch.cuda.synchronize
    nofma = dict(enable_fp_fusion=False)
    T = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(dev)
    Z = lambda n, dt=torch.float32: torch.zeros(n, dtype=dt, device=dev)
    times, failed = {}, {}

    def case(name, run, result, tol=0.0, frac=0.0, launches=1):
        """Checks run's result against the reference, then times it; a
        workload this Triton cannot compile is reported, not fatal."""
        try:
            run()
            sync()
            if result is not None:
                close(f"{name} (Triton)", result().cpu().numpy(), ref[name], tol, frac)
            times[name] = median_time(run, sync, launches) / launches
        except SystemExit:
            raise
        except Exception as e:  # a Triton version without some feature
            failed[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:120]

    n = SIZES["saxpy"]
    x, y = T(inp["saxpy"][0]), T(inp["saxpy"][1])
    case("saxpy", lambda: saxpy[(triton.cdiv(n, 1024),)](x, y, 2.0, n, B=1024, **nofma), lambda: y)
    del x, y

    s = SIZES["stencil"]
    src_, dst = T(inp["stencil"]), Z((s, s))
    case("stencil", lambda: stencil[(triton.cdiv(s - 2, 1024), s - 2)](src_, dst, s, s, B=1024, **nofma),
         lambda: dst)
    del src_, dst

    n = SIZES["histogram"]
    v, bins = T(inp["histogram"]), Z(NBINS, torch.int32)
    case("histogram", lambda: histogram[(triton.cdiv(n, 1024),)](v, bins, NBINS, n, B=1024), lambda: bins)
    del v, bins

    m = SIZES["matmul"]
    a, b = (T(t) for t in inp["matmul"])
    c = Z(m * m)
    case("matmul", lambda: matmul[(m // 64, m // 64)](a, b, c, m, BM=64, BN=64, BK=32), lambda: c, tol=1e-4)
    del a, b, c

    nb = SIZES["nbody"]
    p, vel, mass = (T(t) for t in inp["nbody"])
    po, vo = Z(3 * nb), Z(3 * nb)
    case("nbody", lambda: nbody[(nb // 64,)](p, vel, mass, po, vo, 0.01, nb, BI=64, BJ=64, **nofma), lambda: vo,
         tol=1e-4)
    del p, vel, mass, po, vo

    r = SIZES["mandelbrot"]
    o = Z((r, r), torch.int32)
    case("mandelbrot", lambda: mandelbrot[(triton.cdiv(r, 256), r)](o, r, r, MAXIT, B=256, **nofma), lambda: o,
         frac=1e-3)
    del o

    n = SIZES["reduce"]
    x, total = T(inp["reduce"]), Z(1, torch.float64)
    case("reduce", lambda: reduce_sum[(n // 4096,)](x, total, B=4096), lambda: total, tol=1e-6)
    del x, total

    t = Z(SIZES["tiny"])
    case("tiny", lambda: tiny[(1,)](t, 64, B=64), None, launches=TINY)
    return times, failed


# ---- matrix products: cuBLAS through PyTorch and Triton's tl.dot, beside kern_array_matmul ------

GEMM_SIZES = (2048, 4096)
# (CSV row stem, what, torch dtype name, TF32 allowed, Triton input_precision)
GEMM_MODES = (("gemm_f32", "EXACT float32 (cuBLAS: TF32 off; Triton: ieee)", "float32", False, "ieee"),
              ("gemm_tf32", "FAST TF32 (float32 in)", "float32", True, "tf32"),
              ("gemm_f16", "FAST float16 (float32 out)", "float16", False, None),
              ("gemm_bf16", "FAST bfloat16 (float32 out)", "bfloat16", False, None))
# Triton's blocks (BM, BN, BK, warps, stages): each size and precision takes the fastest of these
# that compiles and fits, so the peer is timed at its best, not at one guess.
TRITON_GEMM_CONFIGS = ((128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4),
                       (128, 128, 32, 4, 4), (128, 256, 32, 8, 3), (64, 128, 32, 4, 4))


def triton_gemm_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def gemm(a, b, c, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
             PREC: tl.constexpr):
        # programs walk GROUP block rows at a time, so neighbours share panels of a and b in L2
        pid = tl.program_id(0)
        nb_m, nb_n = tl.cdiv(n, BM), tl.cdiv(n, BN)
        first = (pid // (GROUP * nb_n)) * GROUP
        rows = min(nb_m - first, GROUP)
        bm = first + (pid % (GROUP * nb_n)) % rows
        bn = (pid % (GROUP * nb_n)) // rows
        rm = bm * BM + tl.arange(0, BM)
        rn = bn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * n + rk[None, :]
        pb = b + rk[:, None] * n + rn[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, n, BK):
            if PREC == "ieee":
                acc += tl.dot(tl.load(pa), tl.load(pb), input_precision="ieee")
            elif PREC == "tf32":
                acc += tl.dot(tl.load(pa), tl.load(pb), input_precision="tf32")
            else:
                acc += tl.dot(tl.load(pa), tl.load(pb))
            pa += BK
            pb += BK * n
        tl.store(c + rm[:, None] * n + rn[None, :], acc)

    return triton, gemm


def gemm_peers(kern):
    """torch.matmul (cuBLAS) and a tiled Triton kernel (tl.dot) at GEMM_SIZES^3 in each of
    kern_array_matmul's modes; kern's times are the CSV's gemm_* rows of the same run. Triton's
    result is checked against cuBLAS's first (float32 sums of products of the same rounded inputs,
    so they differ only by accumulation order)."""
    import torch
    sync = torch.cuda.synchronize
    try:
        triton, gemm = triton_gemm_kernel()
    except ImportError:
        triton = gemm = None
    lines = ["\n| matrix product | n | kern_array_matmul (ms) | cuBLAS (ms) | kern / cuBLAS | "
             "Triton tl.dot (ms) | kern speed vs Triton |", "|---|---:|---:|---:|---:|---:|---:|"]
    out, notes = [], []
    for n in GEMM_SIZES:
        a32 = torch.rand((n, n), device="cuda") - 0.5
        b32 = torch.rand((n, n), device="cuda") - 0.5
        for stem, what, dname, tf32, prec in GEMM_MODES:
            dt = getattr(torch, dname)
            a, b = a32.to(dt), b32.to(dt)
            torch.backends.cuda.matmul.allow_tf32 = tf32
            want = torch.matmul(a, b).float()
            t_cublas = 1e3 * median_time(lambda: torch.matmul(a, b), sync)
            torch.backends.cuda.matmul.allow_tf32 = False
            t_triton, cfg = None, None
            c = torch.empty((n, n), device="cuda", dtype=torch.float32)
            for BM, BN, BK, warps, stages in TRITON_GEMM_CONFIGS if gemm else ():
                grid = (triton.cdiv(n, BM) * triton.cdiv(n, BN),)
                run = lambda: gemm[grid](a, b, c, n, BM=BM, BN=BN, BK=BK, GROUP=8, PREC=prec or "",
                                         num_warps=warps, num_stages=stages)
                try:
                    run()
                    sync()
                except Exception as e:  # does not fit this card's shared memory, say
                    notes.append(f"Triton {stem} {n}: {BM}x{BN}x{BK} not run ({type(e).__name__})")
                    continue
                err = (c - want).abs().max().item() / max(1.0, want.abs().max().item())
                if err > 1e-2:
                    sys.exit(f"peers.py: Triton gemm {stem} {n}: differs from cuBLAS by {err}")
                t = 1e3 * median_time(run, sync)
                if t_triton is None or t < t_triton:
                    t_triton, cfg = t, f"{BM}x{BN}x{BK}, {warps} warps, {stages} stages"
            row = kern.get(f"{stem}_{n}")
            k_ms = float(row["kern_ms"]) if row else None
            cells = [what, str(n), f"{k_ms:.3f}" if k_ms else "", f"{t_cublas:.3f}",
                     f"{t_cublas / k_ms:.2f}" if k_ms else "",
                     f"{t_triton:.3f} ({cfg})" if t_triton else "",
                     f"{t_triton / k_ms:.2f}" if t_triton and k_ms else ""]
            lines.append("| " + " | ".join(cells) + " |")
            if k_ms:
                out.append((f"{stem}_{n}", "cuBLAS", k_ms, t_cublas, t_cublas / k_ms))
                if t_triton:
                    out.append((f"{stem}_{n}", "Triton", k_ms, t_triton, t_triton / k_ms))
        del a32, b32
    lines += [""] + notes if notes else []
    lines.append("\nkern / cuBLAS = cuBLAS's time / kern's (higher: kern faster). Targets at 4096: EXACT "
                 ">= 0.6, FAST TF32 and bfloat16 >= 0.5; FAST faster than Triton (speed > 1) at 2048 "
                 "and 4096.")
    return lines, out


# ---- sorting: CUB's radix sort through CuPy and PyTorch, beside kern_array_sort ------------------

SORT_N = 1 << 26


def sort_peers(kern):
    """cupy.sort and cupy.argsort, and torch.sort(stable=True) (keys with int64 places; uint32 keys
    when this PyTorch sorts them, else the same bits as int32, which take as many radix passes) of
    bench_gpu's sort input, each checked against NumPy's stable sort first; kern's times are the
    CSV's rows sort and sort_pairs."""
    keys = hash32(SORT_N, 29).astype(np.uint32)
    order = np.argsort(keys, kind="stable")
    want = keys[order]
    peers = {}
    try:
        import cupy as cp
        k = cp.asarray(keys)
        sync = cp.cuda.Device().synchronize
        close("cupy.sort", cp.sort(k).get(), want)
        close("cupy.argsort", k[cp.argsort(k)].get(), want)
        peers["CuPy"] = (median_time(lambda: cp.sort(k), sync), median_time(lambda: cp.argsort(k), sync),
                         "cupy.sort; cupy.argsort (int64 places)")
        del k
    except ImportError as e:
        peers["CuPy"] = (None, None, f"not installed ({e})")
    try:
        import torch
        sync = torch.cuda.synchronize
        note, ref = "torch.sort(stable=True): uint32 keys, int64 places", keys
        try:
            k = torch.from_numpy(ref).to("cuda")
            got = torch.sort(k, stable=True)
        except (RuntimeError, TypeError):
            note, ref = "torch.sort(stable=True): the keys' bits as int32, int64 places", keys.view(np.int32)
            k = torch.from_numpy(ref).to("cuda")
            got = torch.sort(k, stable=True)
        ref_order = order if ref is keys else np.argsort(ref, kind="stable")
        close("torch.sort", got.values.cpu().numpy(), ref[ref_order])
        close("torch.sort (places)", got.indices.cpu().numpy(), ref_order)
        peers["PyTorch"] = (None, median_time(lambda: torch.sort(k, stable=True), sync), note)
        del k, got
    except ImportError as e:
        peers["PyTorch"] = (None, None, f"not installed ({e})")
    rows = [("sort", "uint32 keys", 0), ("sort_pairs", "uint32 keys with values (places)", 1)]
    return peer_table(kern, peers, rows, f"sort of {SORT_N >> 20}M keys", "kern_array_sort (ms)",
                      "Target: kern_array_sort at >= 0.5 of CUB's speed (kern speed >= 0.5).")


def peer_table(kern, peers, rows, what, kern_head, target):
    """The Markdown lines and CSV rows of a table: one line per (CSV row name, label, column) in
    rows that the kern CSV has, its peers' seconds (peers: name -> (seconds by column..., note))
    beside kern's milliseconds; then each peer's note and the target."""
    lines = [f"\n| {what} | {kern_head} | " + " | ".join(f"{p} (ms) | kern speed vs {p}" for p in peers) +
             " |", "|---|---:|" + "---:|---:|" * len(peers)]
    out = []
    for name, label, col in rows:
        if name not in kern:
            continue
        k_ms = float(kern[name]["kern_ms"])
        cells = [label, f"{k_ms:.3f}"]
        for p, t in peers.items():
            if t[col] is None:
                cells += ["", ""]
                continue
            cells += [f"{1e3 * t[col]:.3f}", f"{1e3 * t[col] / k_ms:.2f}"]
            out.append((name, p, k_ms, 1e3 * t[col], 1e3 * t[col] / k_ms))
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"\n{p}: {t[-1]}" for p, t in peers.items()]
    lines.append(target)
    return lines, out


# ---- sum and scan: CuPy, PyTorch and Warp beside kern_array_sum and kern_array_scan ------------

PRIM_N = 1 << 28


def primitive_peers(kern):
    """cupy.sum and cupy.cumsum, torch.sum and torch.cumsum, and Warp's wp.utils.array_sum and
    array_scan (where Warp is installed) of bench_gpu's primitives input (256M float32, the hash
    of i + 23), each result checked first; kern's times are the CSV's rows array_sum and
    array_scan."""
    x = unit(PRIM_N, 23)
    want = float(np.sum(x, dtype=np.float64))
    peers = {}
    try:
        import cupy as cp
        g = cp.asarray(x)
        y = cp.empty_like(g)
        sync = cp.cuda.Device().synchronize
        close("cupy.sum", float(cp.sum(g)), want, tol=1e-3)
        close("cupy.cumsum (last)", float(cp.cumsum(g)[-1]), want, tol=1e-3)
        peers["CuPy"] = (median_time(lambda: cp.sum(g), sync),
                         median_time(lambda: cp.cumsum(g, out=y), sync), "cupy.sum; cupy.cumsum")
        del g, y
    except ImportError as e:
        peers["CuPy"] = (None, None, f"not installed ({e})")
    try:
        import torch
        g = torch.from_numpy(x).to("cuda")
        y = torch.empty_like(g)
        sync = torch.cuda.synchronize
        close("torch.sum", float(torch.sum(g)), want, tol=1e-3)
        close("torch.cumsum (last)", float(torch.cumsum(g, 0)[-1]), want, tol=1e-3)
        peers["PyTorch"] = (median_time(lambda: torch.sum(g), sync),
                            median_time(lambda: torch.cumsum(g, 0, out=y), sync),
                            "torch.sum; torch.cumsum")
        del g, y
    except ImportError as e:
        peers["PyTorch"] = (None, None, f"not installed ({e})")
    try:
        import warp as wp
        wp.init()
        g = wp.array(x, dtype=wp.float32, device="cuda:0")
        y = wp.empty_like(g)
        s = wp.zeros(1, dtype=wp.float32, device="cuda:0")
        sync = wp.synchronize
        wp.utils.array_sum(g, out=s)
        close("warp array_sum", float(s.numpy()[0]), want, tol=1e-3)
        wp.utils.array_scan(g, y, inclusive=True)
        close("warp array_scan (last)", float(y.numpy()[-1]), want, tol=1e-3)
        peers["Warp"] = (median_time(lambda: wp.utils.array_sum(g, out=s), sync),
                         median_time(lambda: wp.utils.array_scan(g, y, inclusive=True), sync),
                         "wp.utils.array_sum; wp.utils.array_scan")
        del g, y, s
    except Exception as e:  # not installed, or no CUDA device it can use
        peers["Warp"] = (None, None, f"not available ({type(e).__name__}: {e})")
    rows = [("array_sum", "kern_array_sum", 0), ("array_scan", "kern_array_scan (inclusive)", 1)]
    return peer_table(kern, peers, rows, "256M float32", "kern (ms)",
                      "Targets: kern_array_sum at least as fast as CuPy's and Warp's sums, "
                      "kern_array_scan at least as fast as CuPy's cumsum (kern speed >= 1).")


# ---- the report -------------------------------------------------------------------------------

NOTES = {"Triton matmul": "tiled, tl.dot (fp32)", "Triton mandelbrot": "masked, maxit iterations per pixel"}


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: peers.py KERN_CSV OUT_MD OUT_CSV")
    kern = {r["workload"]: r for r in csv.DictReader(open(sys.argv[1]))}
    only = os.environ.get("BENCH_ONLY")  # bench_gpu wrote only that table's rows
    table = {"primitives": primitive_peers, "matmul": gemm_peers, "sort": sort_peers}.get(only)
    if table:
        return report(*table(kern))
    inp = inputs()
    lines, rows = [], []
    try:
        import cupy as cp
        ref, ctimes = cupy_runs(cp, inp)
    except ImportError as e:
        sys.exit(f"peers.py: CuPy is needed for the reference ({e}); peers skipped")
    peers = [("CuPy RawKernel", ctimes), ("CuPy ElementwiseKernel",
             {"saxpy": ctimes["saxpy elementwise"], "tiny": ctimes["tiny elementwise"]})]
    failed = {}
    try:
        ttimes, failed = triton_runs(ref, inp)
        peers.append(("Triton", ttimes))
    except ImportError as e:
        lines.append(f"Triton not installed ({e}): no Triton column.\n")
    lines += ["| workload | kern | " + " | ".join(f"{p} | kern speed vs {p.split()[0]}" for p, _ in peers) + " |",
              "|---|---:|" + "---:|---:|" * len(peers)]
    for name, r in kern.items():
        if name.startswith(("sort", "gemm", "array_")):
            continue  # the primitives', sort and matrix product tables below
        per = 1e3 if int(r["launches"]) > 1 else 1.0
        k_ms = float(r["kern_ms"]) / (int(r["launches"]) if per > 1 else 1) * per
        cells = [name, f"{k_ms:.3f}"]
        for p, t in peers:
            if name in t:
                p_ms = t[name] * (1e6 if per > 1 else 1e3)
                note = NOTES.get(f"{p.split()[0]} {name}")
                cells += [f"{p_ms:.3f}" + (f" ({note})" if note else ""), f"{p_ms / k_ms:.2f}"]
                rows.append((name, p, k_ms, p_ms, p_ms / k_ms))
            else:
                cells += ["", ""]
        lines.append("| " + " | ".join(cells) + " |")
    for name, why in failed.items():
        lines.append(f"\nTriton {name}: not run ({why})")
    try:
        gemm_lines, gemm_rows = gemm_peers(kern)
        lines += gemm_lines
        rows += gemm_rows
    except ImportError as e:
        lines.append(f"\nPyTorch not installed ({e}): no cuBLAS or Triton matrix products.")
    for table in (primitive_peers, sort_peers):
        more_lines, more_rows = table(kern)
        lines += more_lines
        rows += more_rows
    report(lines, rows)


def report(lines, rows):
    lines.append("\nTimes in ms per run (tiny: us per launch); speed = peer time / kern time (higher: kern faster).")
    open(sys.argv[2], "w").write("\n".join(lines) + "\n")
    with open(sys.argv[3], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "peer", "kern", "peer_time", "kern_speed_vs_peer"])
        w.writerows(rows)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
