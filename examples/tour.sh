#!/usr/bin/env bash
# Runs every line of the README's tour (the ```sh block under "## A tour")
# exactly as printed, one after another, in a fresh copy of the repository's
# files in a temporary directory: what a new user who follows the README
# runs. A line that fails stops the tour, naming it. After each line, every
# file it names with --out or --plot must exist, and its standard error
# must say that it wrote it.
#
#	bash examples/tour.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readme="$root/README.md"

# The tour's lines: the first ```sh block after the "## A tour" heading.
mapfile -t lines < <(awk '
	/^## / { in_tour = ($0 == "## A tour"); next }
	in_tour && !started && /^```sh$/ { started = 1; next }
	started && /^```$/ { exit }
	started && NF { print }
' "$readme")
if [ "${#lines[@]}" -eq 0 ]; then
	echo "tour.sh: no \`\`\`sh block under \"## A tour\" in $readme" >&2
	exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/lazyvi-tour.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The repository's files as a clone has them (tracked and new, not ignored
# ones, not build outputs).
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -xf - -C "$work"
cd "$work"

start=$SECONDS
for line in "${lines[@]}"; do
	echo "+ $line"
	t0=$SECONDS
	if ! bash -euo pipefail -c "$line" >tour.stdout 2>tour.stderr; then
		cat tour.stdout tour.stderr
		echo "tour.sh: README tour line failed: $line" >&2
		exit 1
	fi
	cat tour.stderr >&2
	# The files the line writes: each --out and --plot argument.
	read -ra words <<<"${line%%#*}"
	for ((i = 0; i + 1 < ${#words[@]}; i++)); do
		case "${words[i]}" in
		--out | --plot)
			f="${words[i + 1]}"
			if [ ! -s "$f" ]; then
				echo "tour.sh: $line: wrote no $f" >&2
				exit 1
			fi
			if ! grep -Eq "(wrote|replaced) $f( |$)" tour.stderr; then
				echo "tour.sh: $line: its standard error does not say it wrote $f" >&2
				exit 1
			fi
			;;
		esac
	done
	echo "  ($((SECONDS - t0)) s; $(wc -l <tour.stdout) lines of output)"
done
echo "tour.sh: all ${#lines[@]} lines of the README's tour ran, in $((SECONDS - start)) s"
