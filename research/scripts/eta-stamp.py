# Reads a vi --progress bar stream on stdin and writes, every STEP seconds,
# the shown ETA beside the time the counting truly had left.
# Usage: vi estimate ... --progress bar 2>&1 >/dev/null | python3 eta-stamp.py OUT.txt STEP
import sys, time, re
t0 = time.time(); buf = b''; rows = []
while True:
    c = sys.stdin.buffer.read1(4096) if hasattr(sys.stdin.buffer,'read1') else sys.stdin.buffer.read(1)
    if not c: break
    now = time.time() - t0
    buf += c
    parts = re.split(rb'[\r\n]', buf)
    buf = parts[-1]
    for p in parts[:-1]:
        s = p.decode(errors='replace').replace('\x1b[K','').strip()
        if s: rows.append((now, s))
end = None
for t, s in rows:
    if 'done, finishing' in s and end is None: end = t
out = open(sys.argv[1], 'w')
last = -10
for t, s in rows:
    m = re.search(r'(\d+)/(\d+) \S+ \[.*\]\s+(\d+)% (\S+) eta (\S+)', s)
    if not m or end is None: continue
    if t - last < float(sys.argv[2]) : continue
    last = t
    print(f"t={t:6.1f}s  {m.group(1):>4}/{m.group(2)}  eta {m.group(5):>6}  actual {end-t:5.1f}s", file=out)
print(f"counting ended at t={end}", file=out)
