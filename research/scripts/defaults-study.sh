#!/usr/bin/env bash
# The study behind research/2026-11-23-full-model-defaults.md: on a simulated setting with known VIs,
# the default full model against a grid of architectures trained to
# convergence, and lazy's and retrain's VI error against the truth.
#
#   research/scripts/defaults-study.sh VI OLDVI SETTING [SEED]
#
# VI is the vi binary under study, OLDVI one built from the commit before
# (the previous defaults: one layer of 50, stopping on the training loss);
# SETTING is friedman1 or interaction (n = 2000). Everything runs with one
# worker; prints one line per measurement. ONLY_DEFAULT=1 runs the default
# alone, NO_GRID=1 the default and the old default; KEEP=DIR keeps the data
# (DIR/d.csv) and the reports (DIR/NAME.json), e.g. for research/scripts/oracle_vi.go.
set -euo pipefail
vi=$1 old=$2 setting=$3 seed=${4:-1}
if [ "${KEEP:-}" ]; then # keep the data and the reports in $KEEP
  dir=$KEEP
  mkdir -p "$dir"
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
"$vi" simulate --setting "$setting" --n 2000 --seed "$seed" --out "$dir/d.csv" 2>/dev/null
truth=$dir/d.truth.json

# mean absolute error of estimator $2's VIs in report $1 against the truth
mae() {
  jq -r --slurpfile t "$truth" --arg e "$2" '
    [.results[] | select(.estimator == $e) | (.vi - $t[0].truth[.feature]) | fabs] | add / length' "$1"
}

run() { # name vi-binary flags...
  local name=$1 bin=$2
  shift 2
  local t0=$SECONDS
  "$bin" estimate --data "$dir/d.csv" --target y --seed "$seed" --workers 1 --inference plain \
    --format json --out "$dir/$name.json" "$@" 2>"$dir/$name.err"
  printf '%-28s eval_mse %.4f  hidden %-9s epochs %-4s stopped_by %-8s' "$name" \
    "$(jq '-.full.score' "$dir/$name.json")" "$(jq -r '.full.hidden // "50"' "$dir/$name.json")" \
    "$(jq -r '.full.epochs // "-"' "$dir/$name.json")" "$(jq -r '.full.stopped_by // "-"' "$dir/$name.json")"
  for e in lazy retrain; do
    if jq -e --arg e "$e" 'any(.results[]; .estimator == $e)' "$dir/$name.json" >/dev/null; then
      printf '  %s_mae %.4f' "$e" "$(mae "$dir/$name.json" "$e")"
    fi
  done
  printf '  (%ds)\n' $((SECONDS - t0))
}

echo "# $setting n 2000 seed $seed"
run default "$vi" --estimators lazy,retrain
[ "${ONLY_DEFAULT:-}" ] && exit 0
run old-default "$old" --estimators lazy,retrain
[ "${NO_GRID:-}" ] && exit 0
# The reference grid: every architecture trained until the validation loss
# has not improved for 100 epochs (cap 5000), batch 64.
for h in 50 100 100,50 200,100 64,64,64; do
  run "grid-$h" "$vi" --estimators dropout --hidden "$h" --epochs 5000 --opt patience=100
done
