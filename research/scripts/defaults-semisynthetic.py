#!/usr/bin/env python3
"""Semi-synthetic data for judging the defaults on data nobody tuned for.

Reads diabetes.csv (442 patients, 10 real features, response "target") and
writes it with two planted features: "signal" ~ N(0, 1), entering the response
as 60 sin(2 signal), and "null" ~ N(0, 1), not entering. Both are independent
of everything else, so their MSE VIs are known: Var(60 sin(2 s)) =
1800 (1 - exp(-8)) = 1799.40 for signal, 0 for null.

    research/scripts/defaults-semisynthetic.py ../shared/data/diabetes.csv OUT.csv [SEED]
"""
import csv
import math
import random
import sys

src, out = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
with open(src) as f:
    rows = list(csv.reader(f))
head, body = rows[0], rows[1:]
t = head.index("target")
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(head[:t] + head[t + 1:] + ["signal", "null", "target"])
    for r in body:
        s, z = rng.gauss(0, 1), rng.gauss(0, 1)
        y = float(r[t]) + 60 * math.sin(2 * s)
        w.writerow(r[:t] + r[t + 1:] + [repr(s), repr(z), repr(y)])
print("truth: signal %.2f, null 0" % (1800 * (1 - math.exp(-8))), file=sys.stderr)
