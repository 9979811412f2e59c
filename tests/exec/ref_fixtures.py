#!/usr/bin/env python3
"""Reference values of the generated run fixtures in tests/kern/run.

Writes ops_<int type>.kern, ops_float32/64.kern, cast_float32/64_to_int.kern,
math_scalar_float32/64.kern and vec_math.kern into the current directory
(run it from tests/kern/run). Every expected value comes from Python's exact
integers, IEEE doubles (rounded to float32 with struct where the fixture is
float32) and the math module, never from kern. The other fixtures carry
their hand-computed values in their own comments.
"""
import math
import struct


def integer_ops():
    types = [("int8",8,True,100,-27),("int16",16,True,30000,-7),("int32",32,True,2000000000,-7),
             ("int64",64,True,9000000000000000000,-7),("uint8",8,False,200,7),("uint16",16,False,60000,7),
             ("uint32",32,False,4000000000,7),("uint64",64,False,18000000000000000000,7)]
    def wrap(v,W,s):
        v &= (1<<W)-1
        if s and v >= 1<<(W-1): v -= 1<<W
        return v
    def tdiv(a,b):
        q = abs(a)//abs(b)
        return q if (a<0)==(b<0) else -q
    def tmod(a,b): return a - b*tdiv(a,b)
    for name,W,s,a,b in types:
        mx = (1<<(W-1))-1 if s else (1<<W)-1
        mn = -(1<<(W-1)) if s else 0
        w = lambda v: wrap(v,W,s)
        c = -a if s else a//3
        ops = [("a + b",w(a+b)),("a - b",w(a-b)),("a * b",w(a*b)),("a / b",w(tdiv(a,b))),("a % b",w(tmod(a,b))),
               ("-a",w(-a)),("a & b",w(a&b)),("a | b",w(a|b)),("a ^ b",w(a^b)),("~a",w(~a)),
               ("a << 3",w(a<<3)),("a >> 2",w(a>>2) if s else (a>>2)),("mx + one",w(mx+1)),("mn - one",w(mn-1)),
               ("mx * two",w(mx*2)),("c / b",w(tdiv(c,b))),("c % b",w(tmod(c,b))),("c >> 2",w(c>>2)),
               ("a + 1",w(a+1)),("(a - 1) * 2 + (b & 3)", w(w(w(a-1)*2)+(b&3)))]
        cmps = [("a < b",a<b),("a <= b",a<=b),("a > b",a>b),("a >= b",a>=b),("a == b",a==b),("a != b",a!=b),
                ("a == a",True),("c < a", c<a)]
        lines = []
        lines.append(f"// Every arithmetic, bitwise, shift and comparison operator on {name}, with")
        lines.append(f"// wraparound at the type's limits and C's truncating / and %.")
        lines.append(f"// (tests/exec/ref_fixtures.py: exact integer arithmetic reduced modulo 2^{W})")
        lines.append(f"// launch: ops 1")
        lines.append(f"// in x: {name}[6] = {a} {b} {mx} {mn} 1 2")
        lines.append(f"// out r: {name}[{len(ops)}]")
        lines.append(f"// out cmp: bool[{len(cmps)}]")
        lines.append(f"// expect r: " + " ".join(str(v) for _,v in ops))
        lines.append(f"// expect cmp: " + " ".join(str(int(v)) for _,v in cmps))
        lines.append(f"kernel void ops({name}[] x, {name}[] r, bool[] cmp) {{")
        lines.append(f"    {name} a = x[0];")
        lines.append(f"    {name} b = x[1];")
        lines.append(f"    {name} mx = x[2];")
        lines.append(f"    {name} mn = x[3];")
        lines.append(f"    {name} one = x[4];")
        lines.append(f"    {name} two = x[5];")
        lines.append(f"    {name} c = " + ("-a;" if s else "a / 3;"))
        for i,(e,_) in enumerate(ops): lines.append(f"    r[{i}] = {e};")
        for i,(e,_) in enumerate(cmps): lines.append(f"    cmp[{i}] = {e};")
        lines.append("}")
        open(f"ops_{name}.kern","w").write("\n".join(lines)+"\n")


def float_ops():
    def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
    def fmt(x):
        if math.isnan(x): return "nan"
        if math.isinf(x): return "inf" if x > 0 else "-inf"
        return "%.17g" % x
    for name, W, rnd, big in [("float32", 32, f32, 16777216.0), ("float64", 64, lambda v: v, 9007199254740992.0)]:
        a, b = rnd(1.5), rnd(-0.1)
        third = rnd(1.0/3.0)
        inf, nan = float('inf'), float('nan')
        def div(x, y):
            if y == 0: return nan if x == 0 or math.isnan(x) else math.copysign(inf, x) * math.copysign(1, y)
            return x / y
        ops = [("a + b", rnd(a+b)), ("a - b", rnd(a-b)), ("a * b", rnd(a*b)), ("a / b", rnd(a/b)), ("-a", -a),
               ("one / three", rnd(1.0/3.0)), ("(big + one) - big", 0.0), ("a / zero", inf), ("-a / zero", -inf),
               ("zero / zero", nan), ("inf_ - inf_", nan), ("a + inf_", inf), ("a * 2.5", rnd(a*2.5)),
               ("a * b + one", rnd(rnd(a*b)+1)), ("-zero", -0.0), ("(a - one) * (a + one) / b", rnd(rnd(rnd(a-1)*rnd(a+1))/b))]
        cmps = [("a < b", a < b), ("a > b", a > b), ("a <= a", True), ("a >= b", a >= b), ("nan_ == nan_", False),
                ("nan_ != nan_", True), ("nan_ < a", False), ("nan_ >= a", False), ("zero == -zero", True),
                ("inf_ > big", True), ("-inf_ < -big", True), ("a != b", True)]
        L = []
        L.append(f"// Arithmetic and comparisons on {name}: results are rounded to {name} after every")
        L.append(f"// operation (not computed in a wider type), IEEE infinities and NaN, -0 == +0.")
        L.append(f"// (tests/exec/ref_fixtures.py: IEEE arithmetic in Python, rounded to {name})")
        L.append(f"// launch: ops 1")
        L.append(f"// in x: {name}[8] = 1.5 -0.1 0 1 3 {fmt(big)} inf nan")
        L.append(f"// out r: {name}[{len(ops)}]")
        L.append(f"// out cmp: bool[{len(cmps)}]")
        L.append(f"// expect r: " + " ".join(fmt(v) for _, v in ops))
        L.append(f"// expect cmp: " + " ".join(str(int(v)) for _, v in cmps))
        L.append(f"// tol: 1e-15")
        L.append(f"kernel void ops({name}[] x, {name}[] r, bool[] cmp) {{")
        for i, v in enumerate(["a", "b", "zero", "one", "three", "big", "inf_", "nan_"]):
            L.append(f"    {name} {v} = x[{i}];")
        for i, (e, _) in enumerate(ops): L.append(f"    r[{i}] = {e};")
        for i, (e, _) in enumerate(cmps): L.append(f"    cmp[{i}] = {e};")
        L.append("}")
        open(f"ops_{name}.kern", "w").write("\n".join(L) + "\n")


def float_to_int_casts():
    def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
    types = [("int8",8,True),("int16",16,True),("int32",32,True),("int64",64,True),
             ("uint8",8,False),("uint16",16,False),("uint32",32,False),("uint64",64,False)]
    def cvt(x, W, s):
        # the documented rule: truncate toward zero, saturate, NaN -> 0, unsigned: <= -1 -> 0
        if math.isnan(x): return 0
        lo, hi = (-(1 << (W-1)), (1 << (W-1)) - 1) if s else (0, (1 << W) - 1)
        if math.isinf(x): return hi if x > 0 else lo
        t = int(x)  # exact truncation toward zero
        return max(lo, min(hi, t))
    def fmt(x):
        if math.isnan(x): return "nan"
        if math.isinf(x): return "inf" if x > 0 else "-inf"
        return "%.17g" % x
    common = [0.0, -0.0, 1.9, -1.9, 127.9, 128.0, -128.9, -129.0, 255.5, 256.0, 32767.9, 40000.0, -40000.0,
              65535.5, 70000.0, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0,
              4294967296.0, 9223371487098961920.0, 9223372036854775808.0, -9223372036854775808.0,
              18446742974197923840.0, 1e30, -1e30, float('inf'), float('-inf'), float('nan'), -0.5, -1.0]
    extra64 = [2147483647.9, -2147483648.9, 4294967295.5, 9223372036854774784.0, 18446744073709549568.0,
               -9223372036854777856.0, 0.999999999]
    for fname, vals, rnd in [("float32", common, f32), ("float64", common + extra64, lambda v: v)]:
        vals = [rnd(v) for v in vals]
        n = len(vals)
        L = [f"// {fname} -> every integer type, with both cast spellings: truncation toward zero,",
             "// saturation at the target's limits (+-inf too), NaN -> 0, and unsigned targets",
             "// give 0 for every value <= -1 (see stdlib/kern_builtins.h).",
             "// (tests/exec/ref_fixtures.py: Python exact truncation, then clamping to the range)",
             f"// launch: cvt {n}",
             f"// in x: {fname}[{n}] = " + " ".join(fmt(v) for v in vals)]
        for t, W, s in types: L.append(f"// out o{t}: {t}[{n}]")
        for t, W, s in types: L.append(f"// expect o{t}: " + " ".join(str(cvt(v, W, s)) for v in vals))
        params = ", ".join(f"{t}[] o{t}" for t, W, s in types)
        L.append(f"kernel void cvt({fname}[] x, {params}) {{")
        L.append("    int i = tid();")
        L.append(f"    {fname} v = x[i];")
        for k, (t, W, s) in enumerate(types):
            L.append(f"    o{t}[i] = {t}(v);" if k % 2 == 0 else f"    o{t}[i] = ({t})v;")
        L.append("}")
        open(f"cast_{fname}_to_int.kern", "w").write("\n".join(L) + "\n")


def scalar_math():
    def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
    def rnd(x): return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)
    def clamp(x, lo, hi): return min(max(x, lo), hi)
    def smooth(e0, e1, x):
        t = clamp((x - e0) / (e1 - e0), 0.0, 1.0); return t * t * (3 - 2 * t)
    def sign(x): return 1.0 if x > 0 else -1.0 if x < 0 else x
    rows = [("sqrt(abs(x))", lambda x: math.sqrt(abs(x))), ("rsqrt(abs(x))", lambda x: 1 / math.sqrt(abs(x))),
            ("cbrt(x)", lambda x: math.copysign(abs(x) ** (1 / 3), x)), ("exp(x)", math.exp), ("exp2(x)", lambda x: 2.0 ** x),
            ("log(abs(x))", lambda x: math.log(abs(x))), ("log2(abs(x))", lambda x: math.log2(abs(x))),
            ("log10(abs(x))", lambda x: math.log10(abs(x))), ("pow(abs(x), 1.5)", lambda x: abs(x) ** 1.5),
            ("pow(x, 3.0)", lambda x: x ** 3), ("sin(x)", math.sin), ("cos(x)", math.cos), ("tan(x)", math.tan),
            ("asin(x / 4.0)", lambda x: math.asin(x / 4)), ("acos(x / 4.0)", lambda x: math.acos(x / 4)),
            ("atan(x)", math.atan), ("atan2(x, -1.5)", lambda x: math.atan2(x, -1.5)), ("sinh(x)", math.sinh),
            ("cosh(x)", math.cosh), ("tanh(x)", math.tanh), ("floor(x)", math.floor), ("ceil(x)", math.ceil),
            ("round(x)", rnd), ("trunc(x)", math.trunc), ("fmod(x, 0.75)", lambda x: math.fmod(x, 0.75)),
            ("abs(x)", abs), ("sign(x)", sign), ("min(x, 1.0)", lambda x: min(x, 1.0)), ("max(x, 1.0)", lambda x: max(x, 1.0)),
            ("clamp(x, -1.0, 1.0)", lambda x: clamp(x, -1, 1)), ("lerp(x, 10.0, 0.25)", lambda x: x + (10 - x) * 0.25),
            ("step(1.0, x)", lambda x: 0.0 if x < 1 else 1.0), ("smoothstep(-1.0, 3.0, x)", lambda x: smooth(-1, 3, x))]
    for name, tname, tol, cv in [("float32", "float", "2e-6", f32), ("float64", "double", "1e-14", lambda v: v)]:
        xs = [cv(v) for v in (0.5, -1.25, 2.5, -3.5, 0.1)]
        n, m = len(rows), len(xs)
        L = [f"// Every scalar math builtin on {name}, at a few points per function (the",
             "// edge cases and 10,000-point sweeps are in tests/test_exec.c); round() rounds",
             "// halfway cases away from zero.",
             "// (tests/exec/ref_fixtures.py: Python's math module in double precision)",
             f"// launch: sm {m}",
             f"// in xs: {name}[{m}] = " + " ".join("%.17g" % x for x in xs),
             f"// out r: {name}[{n},{m}]",
             "// expect r: " + " ".join("%.17g" % f(x) for _, f in rows for x in xs),
             f"// tol: {tol}",
             f"kernel void sm({tname}[] xs, {tname}[,] r) {{",
             "    int i = tid();",
             f"    {tname} x = xs[i];"]
        for k, (e, _) in enumerate(rows): L.append(f"    r[{k}, i] = {e};")
        L.append("}")
        open(f"math_scalar_{name}.kern", "w").write("\n".join(L) + "\n")


def vector_math():
    def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
    def fmt(x): return "%.9g" % x
    u = [f32(v) for v in (0.25, -1.5, 2.75, 4.0)]
    w = [f32(v) for v in (2.0, 0.5, -3.0, 1.0)]
    def rnd(x): return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)
    def cfmod(a, b): return math.fmod(a, b)
    def clamp(x, lo, hi): return min(max(x, lo), hi)
    def smooth(e0, e1, x):
        t = clamp((x - e0) / (e1 - e0), 0.0, 1.0); return t * t * (3 - 2 * t)
    def sign(x): return 1.0 if x > 0 else -1.0 if x < 0 else x
    def pw(a, b):
        try: return math.pow(a, b)
        except ValueError: return float('nan')
    A = lambda f: [f(x) for x in u]
    B = lambda f: [f(x, y) for x, y in zip(u, w)]
    pos = [abs(x) + 1 for x in u]
    rows = [
     ("sqrt(abs(u) + vec4(1.0))", [math.sqrt(x) for x in pos]),
     ("rsqrt(abs(u) + vec4(1.0))", [1 / math.sqrt(x) for x in pos]),
     ("cbrt(u)", A(lambda x: math.copysign(abs(x) ** (1 / 3), x))),
     ("exp(u)", A(math.exp)), ("exp2(u)", A(lambda x: 2.0 ** x)),
     ("log(abs(u) + vec4(1.0))", [math.log(x) for x in pos]), ("log2(abs(u) + vec4(1.0))", [math.log2(x) for x in pos]),
     ("log10(abs(u) + vec4(1.0))", [math.log10(x) for x in pos]),
     ("sin(u)", A(math.sin)), ("cos(u)", A(math.cos)), ("tan(u)", A(math.tan)),
     ("asin(u / 4.0)", A(lambda x: math.asin(x / 4))), ("acos(u / 4.0)", A(lambda x: math.acos(x / 4))),
     ("atan(u)", A(math.atan)), ("sinh(u)", A(math.sinh)), ("cosh(u)", A(math.cosh)), ("tanh(u)", A(math.tanh)),
     ("floor(u)", A(math.floor)), ("ceil(u)", A(math.ceil)), ("round(u)", A(rnd)), ("trunc(u)", A(math.trunc)),
     ("abs(u)", A(abs)), ("sign(u)", A(sign)),
     ("pow(abs(u), w)", [pw(abs(a), b) for a, b in zip(u, w)]), ("atan2(u, w)", B(math.atan2)), ("fmod(u, w)", B(cfmod)),
     ("min(u, w)", B(min)), ("max(u, w)", B(max)), ("clamp(u, w, w + vec4(1.0))", B(lambda x, y: clamp(x, y, y + 1))),
     ("clamp(u, -1.0, 1.0)", A(lambda x: clamp(x, -1, 1))),
     ("lerp(u, w, 0.25)", B(lambda a, b: a + (b - a) * 0.25)), ("lerp(u, w, vec4(0.0, 0.5, 1.0, 2.0))",
       [a + (b - a) * t for a, b, t in zip(u, w, (0, 0.5, 1, 2))]),
     ("step(w, u)", B(lambda x, e: 0.0 if x < e else 1.0)), ("step(0.5, u)", A(lambda x: 0.0 if x < 0.5 else 1.0)),
     ("smoothstep(w - vec4(2.0), w + vec4(2.0), u)", B(lambda x, e: smooth(e - 2, e + 2, x))),
     ("smoothstep(-2.0, 3.0, u)", A(lambda x: smooth(-2, 3, x))),
    ]
    n = len(rows)
    L = ["// Componentwise math builtins on vec4 (each component must equal the scalar",
         "// function of that component), including the mixed vector/scalar forms of",
         "// clamp, lerp, step and smoothstep.",
         "// (tests/exec/ref_fixtures.py: Python's math module in double precision)",
         "// launch: vm 1",
         "// in p: vec4[2] = " + " ".join(fmt(x) for x in u + w),
         f"// out r: vec4[{n}]",
         "// expect r: " + " ".join(fmt(x) for _, v in rows for x in v),
         "// tol: 2e-6",
         "kernel void vm(vec4[] p, vec4[] r) {",
         "    vec4 u = p[0];",
         "    vec4 w = p[1];"]
    for i, (e, _) in enumerate(rows): L.append(f"    r[{i}] = {e};")
    L.append("}")
    open("vec_math.kern", "w").write("\n".join(L) + "\n")


if __name__ == "__main__":
    integer_ops()
    float_ops()
    float_to_int_casts()
    scalar_math()
    vector_math()
