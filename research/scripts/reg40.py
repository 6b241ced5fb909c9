#!/usr/bin/env python3
"""The 40-feature, 4000-row regression file of the default run's cost.

Writes reg40.csv (or OUT): 4000 rows of 40 standard normal features x1..x40
and a response y. x2 = 0.8 x1 + 0.6 z (correlation 0.8 with x1, variance 1);
the signal is additive and nonlinear in x1..x8,

    y = 1.5 sin(1.5 x1) + x2 + 0.8 (x3^2 - 1) + 1.2 tanh(2 x4) + 0.7 x5
        + 0.5 |x6| + 0.6 cos(x7) + 0.4 x8 + N(0, 1),

and x9..x40 are nulls. Values are written with 6 significant digits. The
seed is 40 unless given; the same seed writes the same file.

    research/scripts/reg40.py [OUT [SEED]]
    vi estimate --data reg40.csv --target y --format json --out reg40.json
"""
import math
import random
import sys

if len(sys.argv) > 3 or any(a.startswith("-") for a in sys.argv[1:]):
    sys.exit(__doc__)
out = sys.argv[1] if len(sys.argv) > 1 else "reg40.csv"
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 40)
n, p = 4000, 40
with open(out, "w") as f:
    f.write(",".join([f"x{j + 1}" for j in range(p)] + ["y"]) + "\n")
    for _ in range(n):
        x = [random.gauss(0, 1) for _ in range(p)]
        x[1] = 0.8 * x[0] + 0.6 * x[1]
        y = (1.5 * math.sin(1.5 * x[0]) + 1.0 * x[1] + 0.8 * (x[2] ** 2 - 1)
             + 1.2 * math.tanh(2 * x[3]) + 0.7 * x[4] + 0.5 * abs(x[5]) + 0.6 * math.cos(x[6])
             + 0.4 * x[7] + random.gauss(0, 1))
        f.write(",".join(f"{v:.6g}" for v in x + [y]) + "\n")
