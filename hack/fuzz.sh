#!/usr/bin/env bash
# Runs every fuzz target of the module (found as `func Fuzz...` in *_test.go)
# for EXECS executions each, one target at a time, and prints a Markdown
# table for docs/benchmarks.md: executions, wall time and rate per target.
# A failing input is written by go test to <package>/testdata/fuzz/<target>/
# (a seed case from then on: commit it with the fix); the script then exits 1
# after running the remaining targets.
#
#   hack/fuzz.sh EXECS [TABLE_FILE]
#
# FUZZ_MATCH (an extended regular expression on "<package> <target>") runs
# only the targets it matches. The table is written row by row, so a run
# that is stopped keeps the rows of the targets it finished.
set -euo pipefail

execs=${1:?usage: hack/fuzz.sh EXECS [TABLE_FILE]}
table=${2:-/dev/stdout}
go=${GO:-go}
# How long go test may minimize each new interesting input (its default,
# 60s, stalls a run on every one: minimizing executions are not counted).
minimize=${FUZZ_MINIMIZE:-200x}
cd "$(dirname "$0")/.."

mapfile -t targets < <(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./test/capicontrollers/' | sort |
	while read -r file; do
		for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
			echo "./$(dirname "${file#./}") $name"
		done
	done | grep -E "${FUZZ_MATCH:-.}")

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
{
	echo "| target | package | executions | fuzzing time | rate | wall time (with build) | result |"
	echo "|---|---|---|---|---|---|---|"
} >"$table"
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $pkg $name: $execs executions" >&2
	start=$(date +%s.%N)
	# -run '^$': no unit test, only the target (its seeds first). -timeout 0:
	# go test's 10 minutes would end a slow target's budget as a failure.
	if "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "${execs}x" -fuzzminimizetime "$minimize" -timeout 0 "$pkg" >"$log" 2>&1; then
		result=pass
	else
		result="**FAILED** (input in $pkg/testdata/fuzz/$name/)"
		failed=1
	fi
	end=$(date +%s.%N)
	tail -n 3 "$log" >&2
	# go test's last progress line: "fuzz: elapsed: 41s, execs: 1000000 (24236/sec), ..."
	done_execs=$(grep -o 'execs: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || echo 0)
	# elapsed is a Go duration: 41s, 1m15s, 1h2m3s.
	fuzz_secs=$(grep -o 'elapsed: [0-9hms]*' "$log" | tail -n 1 | sed 's/elapsed: //' |
		awk '{ n = 0; s = $0; while (match(s, /[0-9]+[hms]/)) { v = substr(s, RSTART, RLENGTH - 1); u = substr(s, RSTART + RLENGTH - 1, 1);
			n += v * (u == "h" ? 3600 : (u == "m" ? 60 : 1)); s = substr(s, RSTART + RLENGTH) } print n }')
	fuzz_secs=${fuzz_secs:-0}
	wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", e - s }')
	rate=$(awk -v n="$done_execs" -v s="$fuzz_secs" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "—" }')
	echo "| \`$name\` | \`$pkg\` | $done_execs | ${fuzz_secs} s | $rate/s | ${wall} s | $result |" >>"$table"
done
exit "$failed"
