#!/usr/bin/env bash
# The command-line contract, with the real binary on the build host.
# Prints one "PASS name" / "FAIL name: why" line per check.
B=${BUILD:-build}/sbx-bpf
T=cli
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

"$B" --version >"$W/out"; check version-exit "$?" 0
grep -qE '^sbx-bpf [0-9]+\.[0-9]+\.[0-9]+' "$W/out" && pass version-text || fail version-text "$(cat "$W/out")"
"$B" --json version | jq -e '.version and .abi == 7' >/dev/null && pass version-json || fail version-json "bad JSON"

"$B" >/dev/null 2>&1; check no-command-exit-2 "$?" 2
"$B" frobnicate 2>"$W/err"; check unknown-command-exit-2 "$?" 2
grep -q "unknown command 'frobnicate'" "$W/err" && pass unknown-command-names-it || fail unknown-command-names-it "$(cat "$W/err")"
"$B" --json frobnicate >"$W/out" 2>/dev/null
jq -e '.error | test("frobnicate")' "$W/out" >/dev/null && pass json-error-object || fail json-error-object "$(cat "$W/out")"
"$B" --bogus-option >/dev/null 2>&1; check unknown-global-option-exit-2 "$?" 2
"$B" run --bogus -- true >/dev/null 2>&1; check unknown-run-option-exit-2 "$?" 2
"$B" doctor --bogus >/dev/null 2>&1; check unknown-doctor-option-exit-2 "$?" 2
"$B" run >/dev/null 2>"$W/err"; check run-without-command-exit-2 "$?" 2
grep -q "no command given" "$W/err" && pass run-without-command-message || fail run-without-command-message "$(cat "$W/err")"
"$B" run --name a/b -- true >/dev/null 2>&1; check run-bad-name-exit-2 "$?" 2
"$B" run --deny-read '' -- true >/dev/null 2>&1; check run-empty-path-exit-2 "$?" 2

for cmd in run doctor; do
	"$B" $cmd --help >"$W/out"; check "$cmd-help-exit-0" "$?" 0
	grep -q "Usage: sbx-bpf $cmd" "$W/out" && pass "$cmd-help-text" || fail "$cmd-help-text" "$(head -2 "$W/out")"
done
"$B" --help | grep -q '^  doctor' && pass help-lists-commands || fail help-lists-commands "doctor missing"

# On a host that cannot enforce (doctor says why), run refuses with exit 1,
# points at doctor, and creates nothing; on one that can, it just works.
if "$B" doctor >/dev/null 2>&1; then
	"$B" run -- true; check run-works-where-doctor-passes "$?" 0
else
	"$B" run --name cli-probe -- true >/dev/null 2>"$W/err"; check run-refuses-exit-1 "$?" 1
	grep -q "sbx-bpf doctor" "$W/err" && pass run-refusal-points-at-doctor || fail run-refusal-points-at-doctor "$(cat "$W/err")"
	v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -z "$v2" ] || [ ! -e "$v2/sbx-bpf/cli-probe" ] && pass run-leaves-no-cgroup || fail run-leaves-no-cgroup "$v2/sbx-bpf/cli-probe exists"
fi
exit 0
