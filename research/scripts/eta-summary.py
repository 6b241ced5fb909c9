# Summarizes eta-stamp.py files: the shown ETA over the time left, in the
# first repetition and in the later ones (samples with at least 5 s left).
# Usage: python3 eta-summary.py A.txt B.txt ...
import re,sys,statistics as st,math
def dur(s):
    if s=='?': return None
    m=re.fullmatch(r'(?:(\d+)h)?(?:(\d+)m)?(\d+)s',s); h,mi,se=m.groups()
    return int(h or 0)*3600+int(mi or 0)*60+int(se)
for f in sys.argv[1:]:
    rows=[]
    for l in open(f):
        m=re.match(r't=\s*([\d.]+)s\s+(\d+)/(\d+)\s+eta\s+(\S+)\s+actual\s+([\d.]+)s',l)
        if m:
            t,d,tot,e,a=m.groups(); e=dur(e)
            if e is not None and float(a)>=5: rows.append((float(t),int(d),int(tot),e,float(a)))
    if not rows: print(f,'no samples'); continue
    tot=rows[0][2]; per=tot//3
    r1=[e/a for t,d,_,e,a in rows if d<per]; r2=[e/a for t,d,_,e,a in rows if d>=per]
    def s(r): return f"n {len(r):3d} median {st.median(r):.2f} range {min(r):.2f}-{max(r):.2f}" if r else "-"
    print(f"{f:22s} rep1: {s(r1)} | later: {s(r2)}")
