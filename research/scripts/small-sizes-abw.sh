#!/bin/bash
# usage: small-sizes-abw.sh N bench-args... ; alternates ./vi-base and ./vi-new on a vi bench, prints lazy's (and retrain's) s/feature
n=$1; shift
for i in $(seq $n); do
  for b in base new; do
    ./vi-$b bench "$@" --format json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin); d=d if isinstance(d,list) else [d]
print('$b', ' '.join('%s:%.4f'%(r['estimator'],r['seconds_per_feature']) for run in d for r in run['results']))"
  done
done
uptime
