#!/bin/bash
# usage: small-sizes-ab.sh N cmd-args... ; alternates ./vi-base and ./vi-new, prints cpu (user+sys) and faults
n=$1; shift
for i in $(seq $n); do
  for b in base new; do
    /usr/bin/time -f "$b %U %S %e %R" -o "${TMPDIR:-/tmp}/ab.$$" ./vi-$b "$@" >/dev/null 2>&1
    cat "${TMPDIR:-/tmp}/ab.$$"
  done
done | awk '{cpu=$2+$3; s[$1]=s[$1]" "cpu; f[$1]=f[$1]" "$5; if($1=="new"){r=r" "sprintf("%.3f",cpu/last)} else last=cpu} END{print "base cpu:"s["base"]; print "new  cpu:"s["new"]; print "new/base:"r; print "base faults:"f["base"]; print "new faults:"f["new"]}'
uptime
