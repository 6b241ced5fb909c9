#!/usr/bin/env bash
# behaviour.sh records what the vi command does: about ninety commands that
# cover every command, the main flags and the error paths, on tiny data.
# Each command's stdout, stderr, exit code and the text files it writes go
# into one file per command under OUTDIR, with seconds, timings and the
# scratch directory masked, so that two runs of one build compare equal and
# a refactoring can be checked against a recorded run:
#
#	go build -o /tmp/vi-old ./cmd/vi     # on the commit before the change
#	research/scripts/behaviour.sh /tmp/vi-old /tmp/behaviour-old
#	go build -o /tmp/vi-new ./cmd/vi     # on the change
#	research/scripts/behaviour.sh /tmp/vi-new /tmp/behaviour-new
#	diff -r /tmp/behaviour-old /tmp/behaviour-new
#
# It takes about three minutes on two idle cores (fifteen when five jobs
# share them).
set -u

if [ $# -ne 2 ]; then
	echo "usage: behaviour.sh VI-BINARY OUTDIR" >&2
	exit 2
fi
VI=$(realpath "$1")
OUT=$(realpath -m "$2")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$OUT"
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/vi-behaviour.XXXXXX)
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export LAZYVI_PROGRESS=off
export LAZYVI_PLUGIN_TIMEOUT=60s

# mask reads a command's output or a file it wrote on stdin and masks what
# changes from run to run: the scratch directory and the binary's path;
# in JSON, the numbers under a key that names seconds, time, shares or
# GFLOP/s; in CSV, such columns; in text, durations ("1.23 s", "45 ms"),
# GFLOP/s figures with their shares, and table columns headed seconds.
cat >"$WORK/.mask.py" <<'PY'
import re, sys
work, vi = sys.argv[1], sys.argv[2]
text = sys.stdin.read().replace(work, "WORK").replace(vi, "VI")
timekey = re.compile(r"second|time|share|gflop|elapsed|duration|^total_s$|_s$")
num = r"-?[0-9][0-9.eE+-]*"

def json_lines(lines):
    stack, out = [], []
    for line in lines:
        m = re.match(r'\s*(?:"([^"]*)":\s*)?([\[{])\s*$', line)
        inside = any(timekey.search(k) for k in stack)
        if m:
            stack.append(m.group(1) or "")
            out.append(line)
            continue
        if re.match(r"\s*[\]}],?\s*$", line):
            if stack:
                stack.pop()
            out.append(line)
            continue
        m = re.match(r'(\s*"([^"]*)":\s*)(' + num + r'|"[^"]*")(,?)\s*$', line)
        if m and (inside or timekey.search(m.group(2))):
            line = m.group(1) + "<T>" + m.group(4)
        elif inside:
            line = re.sub(r"^(\s*)" + num + r"(,?)$", r"\1<T>\2", line)
        out.append(line)
    return out

def csv_lines(lines):
    head = lines[0].split(",")
    drop = [i for i, h in enumerate(head) if timekey.search(h)]
    out = [lines[0]]
    for line in lines[1:]:
        f = line.split(",")
        if len(f) == len(head):
            for i in drop:
                f[i] = "<T>"
        out.append(",".join(f))
    return out

def text_lines(lines):
    out, ends = [], []
    for line in lines:
        if not line.strip():
            ends = []
        elif re.search(r"(^|  )(seconds|total s|s/feature|median s)(  |$)", line) and '"' not in line:
            ends = [m.end() for m in re.finditer(r"seconds|total s|s/feature|median s", line)]
        elif ends:
            for e in ends:
                if e <= len(line) and line[e - 1] != " ":
                    b = line.rfind(" ", 0, e) + 1
                    line = line[:b] + "<T>".rjust(e - b) + line[e:]
        line = re.sub(r"\b[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)? ?(s|ms|µs|us|ns|min|h)\b", "<T>", line)
        line = re.sub(r"\b[0-9]+m[0-9]+(\.[0-9]+)?s\b", "<T>", line)
        line = re.sub(r"[0-9.]+x (faster|slower)", r"<R>x \1", line)
        line = re.sub(r"seconds( [0-9.]+)+", "seconds <T>", line)
        if "GFLOP" in line:
            line = re.sub(r"[0-9.]+ GFLOP/s", "<F> GFLOP/s", line)
            line = re.sub(r"[0-9]+%", "<P>%", line)
        line = re.sub(r"go[0-9]+\.[0-9]+(\.[0-9]+)?", "goX", line)
        out.append(line)
    return out

lines = text.split("\n")
first = text.lstrip()[:1]
if first in "{[" and first:
    lines = json_lines(lines)
elif lines and re.fullmatch(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)+", lines[0]):
    lines = csv_lines(lines)
else:
    lines = text_lines(lines)
out = "\n".join(lines)
if out and not out.endswith("\n"):
    out += "\n(no newline at the end)\n"
sys.stdout.write(out)
PY
mask() {
	python3 "$WORK/.mask.py" "$WORK" "$VI"
}

# record NAME: appends the files written since the stamp to OUT/NAME.
record_files() {
	local name=$1 f
	find . -type f -newer "$WORK/.stamp" ! -name '.stamp' ! -name '.stdout' ! -name '.stderr' | LC_ALL=C sort | while read -r f; do
		echo "--- file $f"
		case "$f" in
		*.png | *.pdf | *.vimodel) echo "(binary, $(wc -c <"$f" | awk '{print ($1 > 0) ? "non-empty" : "empty"}'))" ;;
		# The experiments' and benchmarks' figures plot seconds.
		*.svg) case "$name" in
			*experiment* | *bench*) echo "(svg, $(wc -c <"$f" | awk '{print ($1 > 0) ? "non-empty" : "empty"}'))" ;;
			*) mask <"$f" | head -400 ;;
			esac ;;
		*) mask <"$f" | head -400 ;;
		esac
	done >>"$OUT/$name"
}

# run NAME ARGS...: runs vi ARGS and records it as NAME.
run() {
	local name=$1
	shift
	touch "$WORK/.stamp"
	sleep 0.01
	"$VI" "$@" >"$WORK/.stdout" 2>"$WORK/.stderr" </dev/null
	finish "$name" $? "vi $*"
}

# runsh NAME SCRIPT: runs a shell line (with vi as $VI) and records it.
runsh() {
	local name=$1
	touch "$WORK/.stamp"
	sleep 0.01
	VI=$VI bash -c "$2" >"$WORK/.stdout" 2>"$WORK/.stderr" </dev/null
	finish "$name" $? "$2"
}

finish() {
	{
		echo "\$ $3" | mask
		echo
		echo "--- exit $2"
		echo "--- stdout"
		mask <"$WORK/.stdout"
		echo "--- stderr"
		mask <"$WORK/.stderr"
	} >"$OUT/$1"
	record_files "$1"
	printf '%-28s exit %s\n' "$1" "$2"
}

FAST=(--epochs 20 --workers 2)

# Help, lists and usage errors.
run 001-no-args
run 002-help help
run 003-help-flag --help
for c in estimate shapley roar train merge simulate bench experiment backends estimators measures version; do
	run "004-help-$c" help "$c"
done
run 005-help-long-estimate help --long estimate
run 006-help-unknown help nosuch
run 007-unknown-command nosuch
run 008-version version
run 009-estimators estimators
run 010-measures measures
run 011-backends backends
run 012-estimate-help estimate --help
run 013-estimate-unknown-flag estimate --nosuch

# Simulated data.
run 020-simulate-linear simulate --setting linear --n 150 --out lin.csv
run 021-simulate-binary simulate --setting binary --n 150 --seed 2 --out bin.csv
run 022-simulate-highdim simulate --setting highdim --n 120 --out hd.csv
run 023-simulate-logistic simulate --setting logistic --n 120 --out logi.csv
run 024-simulate-friedman1 simulate --setting friedman1 --n 120 --out fr.csv
run 025-simulate-interaction simulate --setting interaction --n 120 --rho 0 --out int.csv
run 026-simulate-bad-setting simulate --setting nosuch --out x.csv
run 027-simulate-no-out simulate --setting linear
run 028-simulate-bad-n simulate --n -3 --out x.csv
head -31 lin.csv >lin30.csv
(head -1 lin.csv && tail -60 lin.csv) >linev.csv
awk -F, 'NR == 1 { print $0 ",split"; next } { print $0 "," (NR % 3 == 0 ? "eval" : "train") }' lin.csv >linsplit.csv
(head -1 "$REPO/data/digits.csv" && sed -n 2,181p "$REPO/data/digits.csv") >dig.csv
printf 'a,b,y\n1,2,3\n4,x,6\n' >badcell.csv
printf 'a,b,y\n1,2\n' >short.csv
printf 'g12: x1, x2\nrest: x3, x4\n' >groups.txt
runsh 029-data-files 'wc -l lin30.csv linev.csv linsplit.csv dig.csv'

# estimate: estimators, measures, backends, formats.
run 030-estimate-default estimate --data lin.csv --target y "${FAST[@]}"
run 031-estimate-json estimate --data lin.csv --estimators lazy --format json "${FAST[@]}"
run 032-estimate-csv estimate --data lin.csv --estimators lazy,dropout --format csv "${FAST[@]}"
run 033-estimate-all-estimators estimate --data lin.csv --estimators dropout,permute,cpi,lazy-es,warm-es --repeats 1 --crossfit 0 "${FAST[@]}"
run 034-estimate-r2 estimate --data lin.csv --estimators lazy --measure r2 "${FAST[@]}"
run 035-estimate-linear-backend estimate --data lin.csv --backend linear --estimators lazy,retrain,dropout
run 036-estimate-forest estimate --data lin.csv --backend forest --estimators dropout,permute,retrain --opt trees=10 --repeats 1 --crossfit 0
run 037-estimate-cnn estimate --data dig.csv --backend cnn --image 8x8 --estimators dropout --groups patch4x4 --repeats 1 --crossfit 0 --epochs 3
run 038-estimate-binary estimate --data bin.csv --estimators lazy,dropout "${FAST[@]}"
run 039-estimate-auc estimate --data bin.csv --estimators dropout --measure auc "${FAST[@]}"
run 040-estimate-logloss estimate --data bin.csv --estimators dropout --measure logloss --repeats 1 --crossfit 0 "${FAST[@]}"
run 041-estimate-multiclass estimate --data dig.csv --estimators dropout --repeats 1 --crossfit 0 --epochs 5
run 042-estimate-default-data estimate --estimators dropout --repeats 1 --crossfit 0 "${FAST[@]}"
run 043-estimate-hidden estimate --data lin.csv --estimators lazy --hidden 8,4 "${FAST[@]}"
run 044-estimate-lambda estimate --data lin.csv --estimators lazy --lambda 1 "${FAST[@]}"

# estimate: inference flags.
run 050-inference-split estimate --data lin.csv --estimators lazy --inference split --repeats 1 --crossfit 0 "${FAST[@]}"
run 051-inference-plain estimate --data lin.csv --estimators lazy --inference plain "${FAST[@]}"
run 052-inference-perturbed estimate --data lin.csv --estimators lazy --inference perturbed --perturb 0.3 "${FAST[@]}"
run 053-no-debias estimate --data lin.csv --estimators lazy --debias=false "${FAST[@]}"
run 054-bias-two-sided estimate --data lin.csv --estimators lazy --bias-two-sided "${FAST[@]}"
run 055-no-score-upper estimate --data lin.csv --estimators lazy --score-upper=false "${FAST[@]}"
run 056-no-ensemble estimate --data lin.csv --estimators lazy --ensemble=false --crossfit 3 --repeats 2 "${FAST[@]}"
run 057-train-frac estimate --data lin.csv --estimators lazy --train-frac 0.5 "${FAST[@]}"
run 058-adjust-delta-level estimate --data lin.csv --estimators lazy,dropout --adjust holm --delta 0.05 --level 0.9 --ci-truncate "${FAST[@]}"
run 059-adjust-bh estimate --data lin.csv --estimators dropout --adjust bh "${FAST[@]}"
run 060-inference-bad estimate --data lin.csv --inference nosuch
run 061-perturb-with-split estimate --data lin.csv --inference split --perturb 0.3
run 062-bias-aware-no-debias estimate --data lin.csv --debias=false --bias-aware
run 063-level-bad estimate --data lin.csv --level 2
run 064-adjust-bad estimate --data lin.csv --adjust nosuch
run 065-crossfit-bad estimate --data lin.csv --crossfit 1

# estimate: data, groups, evaluation rows, output.
run 070-groups estimate --data lin.csv --estimators lazy --groups "a=x1,x2;b=x3" "${FAST[@]}"
run 071-groups-file estimate --data lin.csv --estimators dropout --groups-file groups.txt "${FAST[@]}"
run 072-eval-data estimate --data lin.csv --eval-data linev.csv --estimators lazy "${FAST[@]}"
run 073-split-column estimate --data linsplit.csv --target y --split-column split --estimators dropout "${FAST[@]}"
run 074-out-plot estimate --data lin.csv --estimators lazy,dropout --format json --out vi.json --plot vi.png "${FAST[@]}"
run 075-plot-svg estimate --data lin.csv --estimators dropout --plot vi.svg "${FAST[@]}"
runsh 076-stdin '"$VI" estimate --data - --estimators dropout --epochs 20 --workers 2 < lin.csv'
run 077-backend-process estimate --data lin.csv --estimators lazy,dropout --backend-process "${FAST[@]}"
run 078-data-missing estimate --data nosuch.csv
run 079-target-bad estimate --data lin.csv --target nosuch
run 080-estimator-bad estimate --data lin.csv --estimators nosuch
run 081-measure-bad estimate --data lin.csv --measure auc
run 082-format-bad estimate --data lin.csv --format xml
run 083-bad-cell estimate --data badcell.csv
run 084-short-row estimate --data short.csv
run 085-groups-bad estimate --data lin.csv --groups "a=x1,nosuch"
run 086-opt-bad estimate --data lin.csv --opt nosuch=1
run 087-backend-bad estimate --data lin.csv --backend nosuch
run 088-plot-bad-ext estimate --data lin.csv --estimators dropout --plot vi.bmp "${FAST[@]}"
run 089-few-rows estimate --data lin30.csv --estimators dropout --epochs 5

# train and --model.
run 090-train train --data lin.csv --out lin.vimodel "${FAST[@]}"
run 091-train-split train --data lin.csv --repeats 1 --crossfit 0 --out split.vimodel "${FAST[@]}"
run 092-estimate-model estimate --data lin.csv --model lin.vimodel --estimators lazy,dropout --workers 2
run 093-shapley-model shapley --data lin.csv --model split.vimodel --workers 2
run 094-roar-model roar --data lin.csv --model split.vimodel --estimators dropout --fractions .5 --workers 2
run 095-train-no-out train --data lin.csv "${FAST[@]}"
run 096-model-missing estimate --data lin.csv --model nosuch.vimodel
run 097-model-wrong-data estimate --data bin.csv --model lin.vimodel

# shapley.
run 100-shapley shapley --data lin.csv "${FAST[@]}"
run 101-shapley-reduced shapley --data lin.csv --reduced lazy,dropout --exact --format json "${FAST[@]}"
run 102-shapley-subsets shapley --data lin.csv --reduced dropout --subsets 10 --measure r2 --format csv "${FAST[@]}"
run 103-shapley-groups shapley --data lin.csv --reduced dropout --groups "a=x1,x2;b=x3,x4;c=x5,x6" --adjust holm --plot sh.png "${FAST[@]}"
run 104-shapley-bad-reduced shapley --data lin.csv --reduced nosuch
run 105-shapley-exact-bad shapley --data hd.csv --exact

# roar.
run 110-roar roar --data lin.csv --fractions .25,.5 --estimators dropout,retrain "${FAST[@]}"
run 111-roar-orderings roar --data lin.csv --ordering grad,random --fractions .5 --estimators dropout --format csv --plot roar.png "${FAST[@]}"
run 112-roar-json roar --data lin.csv --fractions .5 --estimators lazy-es --format json "${FAST[@]}"
run 113-roar-bad-fractions roar --data lin.csv --fractions 1.5
run 114-roar-bad-ordering roar --data lin.csv --ordering nosuch

# shard and merge.
run 120-shard-1 estimate --data lin.csv --estimators lazy,dropout --shard 1/2 --format json --out s1.json "${FAST[@]}"
run 121-shard-2 estimate --data lin.csv --estimators lazy,dropout --shard 2/2 --format json --out s2.json "${FAST[@]}"
run 122-merge merge s1.json s2.json
run 123-merge-table merge --format table s2.json s1.json
run 124-merge-csv-out merge --format csv --out merged.csv s1.json s2.json
run 125-merge-one-shard merge s1.json
run 126-merge-bad-file merge lin.csv
run 127-merge-none merge
run 128-shard-bad estimate --data lin.csv --shard 3/2

# bench.
run 130-bench-list bench
run 131-bench-linear bench linear --n 150 --width 8 --features 2 --epochs 20
run 132-bench-binary bench binary --n 150 --width 8 --epochs 20 --format json
run 133-bench-highdim bench highdim --n 150 --width 8 --features 2 --epochs 20 --plot hd.png
run 134-bench-data bench data --data lin.csv --target y --features 2 --epochs 20
run 135-bench-coverage bench coverage --reps 2 --n 150 --hidden 8
run 136-bench-coverage-semi bench coverage --setting semi --reps 2 --hidden 8 --format json
run 137-bench-unknown bench nosuch
run 138-bench-bad-flag bench linear --nosuch

# experiment.
run 140-experiment-list experiment --list
run 141-experiment-no-name experiment
run 142-experiment-unknown experiment nosuch
run 143-experiment-help experiment corr --help
runsh 144-experiment-all 'mkdir exp && "$VI" experiment all --reps 1 --workers 2 --out exp'
run 145-experiment-new-dir experiment corr --reps 1 --out new/dir
run 146-experiment-unwritable experiment corr --reps 1 --out /proc/vi-behaviour/sub
run 148-experiment-unwritable-dir experiment ntk-trace --reps 1 --out /proc
run 147-experiment-bad-reps experiment corr --reps -1
