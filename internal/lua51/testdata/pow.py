#!/usr/bin/env python3
# Regenerate pow.txt: cd internal/lua51/testdata && python3 pow.py
# Writes pow vectors from the C library's pow (python's math.pow calls it).
import math, random, struct
from decimal import Decimal, getcontext
from fractions import Fraction
getcontext().prec = 90
random.seed(20261127)
def h(x): return struct.pack('>d', x).hex()
cases = []
edge = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 10.0, 1.1, 0.1, 1e-300, 1e300, 2.5, -2.0, -0.5,
        math.inf, -math.inf, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.9999999999999999, 1.0000000000000002]
for x in edge:
    for y in edge + [0.3333333333333333, -3.0, 1023.0, -1074.0, 1e10, -1e10, 52.5, 100.0]:
        cases.append((x, y))
for _ in range(2500):
    x = random.uniform(0, 10) * 10 ** random.uniform(-5, 5)
    y = random.uniform(-30, 30)
    cases.append((x, y))
for _ in range(1000):
    x = 1 + random.uniform(-1e-3, 1e-3)
    y = random.uniform(-1e6, 1e6)
    cases.append((x, y))
for _ in range(500):
    x = random.uniform(0.5, 2)
    y = float(random.randint(-60, 60))
    cases.append((x, y))
for _ in range(500):
    x = float(random.randint(1, 1000)); y = random.choice([0.5, 1.5, 2.5, 1/3, 0.25, -0.5, 3.0, 7.0])
    cases.append((x, y))
for _ in range(300):
    x = random.uniform(0.1, 10); y = random.uniform(-1100, -300) / math.log2(x) if x != 1 else 1  # near underflow
    cases.append((x, y))
def rounded(x, y, c):
    """x^y correctly rounded, where it is not a special case of C's."""
    if x == 0 or math.isinf(x) or math.isinf(y) or x == 1 or y == 0 or math.isnan(c):
        return c
    if y == int(y) and abs(y) <= 2000:
        return float(Fraction(x) ** int(y))  # exact, so ties go to even
    sign = 1
    if x < 0:
        sign = -1 if int(y) % 2 else 1
        x = -x
    return sign * float((Decimal(y) * Decimal(x).ln()).exp())

with open('pow.txt', 'w') as f:
    f.write('# x y pow(x, y) as IEEE 754 bits in hex: as the C library of lua5.1\'s platform gives it\n')
    f.write('# (python3 math.pow), then correctly rounded (exactly for integer\n# exponents, else from 90 digits with decimal; rounded once)\n')
    n = 0
    for x, y in cases:
        try:
            r = math.pow(x, y)
        except (ValueError, OverflowError):
            continue  # python raises where C returns nan or inf; those are tested by hand
        f.write('%s %s %s %s\n' % (h(x), h(y), h(r), h(rounded(x, y, r))))
        n += 1
print(n)
