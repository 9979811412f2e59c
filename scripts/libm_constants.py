#!/usr/bin/env python3
"""Prints the constants of stdlib/kern_libm.h (needs mpmath).

Each constant is split into doubles whose sum carries more precision than one
double: hi + lo pairs, and pi/2 in pieces with trailing zero bits so that
k * piece is exact for the reduction's k. The bits of 2/pi feed the reduction
of huge arguments (32 bits a word)."""
import mpmath

mpmath.mp.prec = 2000


def d(x):
    return float(x)


def pair(name, x):
    hi = d(x)
    lo = d(x - mpmath.mpf(hi))
    print(f"#define KN__{name}_HI {hi!r}\n#define KN__{name}_LO {lo!r}")


def chop(x, bits):
    """x rounded toward zero to `bits` significant bits."""
    m, e = mpmath.frexp(x)
    return mpmath.ldexp(mpmath.floor(mpmath.ldexp(m, bits)), e - bits)


def main():
    ln2 = mpmath.log(2)
    h = chop(ln2, 32)
    print(f"#define KN__LN2C_HI {d(h)!r} /* 32 bits */\n#define KN__LN2C_LO {d(ln2 - h)!r}")
    pair("LN2", ln2)
    pair("INVLN2", 1 / ln2)
    pair("INVLN10", 1 / mpmath.log(10))
    pair("PIO2", mpmath.pi / 2)
    pair("PI", mpmath.pi)
    pair("THIRD", mpmath.mpf(1) / 3)
    for k in (1, 2, 3):
        pair(f"ATAN{k}Q", mpmath.atan(mpmath.mpf(k) / 4))
    rest = mpmath.pi / 2
    for k in range(1, 4):
        p = chop(rest, 33)
        print(f"#define KN__PIO2_{k} {d(p)!r} /* 33 bits */")
        rest -= p
    print(f"#define KN__PIO2_4 {d(rest)!r}")
    f = 2 / mpmath.pi
    words = []
    for _ in range(44):
        f *= 2**32
        w = int(mpmath.floor(f))
        words.append(w)
        f -= w
    print("/* 2/pi, 32 bits a word */")
    print(", ".join(f"0x{w:08x}u" for w in words))


main()
