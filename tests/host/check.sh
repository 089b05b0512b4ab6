#!/usr/bin/env bash
# `sbx-bpf check` with the real binary: valid and invalid policies, exit
# codes, FILE:LINE:COL messages, --json, sandbox-runtime files, presets.
# Prints one "PASS name" / "FAIL name: why" line per check.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$ROOT/build}/sbx-bpf
T=check
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
has() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "no '$3' in: $(head -c 400 "$2")"; fi; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

cat >good.json <<'EOF'
{
  "version": 1,
  "mode": "audit",
  "filesystem": {
    "denyRead": ["~/.ssh", "**/.env"],
    "allowWrite": ["./out/**"]
  },
  "network": { "allowedDomains": ["github.com"], "allow": ["10.0.0.0/8:443"] }
}
EOF
HOME=/nonexistent-sbx-home "$B" check good.json >out 2>err; check valid-exit-0 "$?" 0
has valid-lists-rule out "denyRead   absolute  /nonexistent-sbx-home/.ssh"
has valid-shows-origin out "denyRead ~/.ssh  [good.json:5:18]"
has valid-any-depth out "any-depth .env"
has valid-trailing-globstar out "$W/out "
has valid-mode out "(audit)"
has valid-mandatory out "mandatory: .git/hooks"
has valid-network out "github.com"
check valid-no-warnings "$(cat err)" ""

HOME=/nonexistent-sbx-home "$B" check --json good.json >out 2>err; check json-exit-0 "$?" 0
jq -e '.valid == true and .policy.mode == "audit" and (.warnings | length) == 0' out >/dev/null &&
	pass json-document || fail json-document "$(cat out)"
jq -e '.policy.rules[0] == {"id": 0, "kind": "denyRead", "scope": "absolute",
	"path": "/nonexistent-sbx-home/.ssh", "text": "denyRead ~/.ssh", "origin": "good.json:5:18"}' \
	out >/dev/null && pass json-rule || fail json-rule "$(jq -c '.policy.rules[0]' out)"
jq -e '[.policy.rules[] | select(.kind == "mandatory")] | length == 17' out >/dev/null &&
	pass json-mandatory-set || fail json-mandatory-set "$(jq -c '[.policy.rules[].kind]' out)"
jq -e '.policy.network.rules == [{"id": 1073741824, "index": 0, "verdict": "allow",
	"cidr": "10.0.0.0/8", "ports": [443, 443], "text": "allow 10.0.0.0/8:443",
	"origin": "good.json:8:60"}] and .policy.network.domains[0].pattern == "github.com"' out >/dev/null &&
	pass json-network || fail json-network "$(jq -c .policy.network out)"
"$B" --json check good.json | jq -e .valid >/dev/null && pass json-global-flag || fail json-global-flag ""

printf '{\n  "filesystem": {\n    "denyRead": ["~/.ssh", "src/*.key"]\n  }\n}\n' >glob.json
"$B" check glob.json >out 2>err; check invalid-exit-2 "$?" 2
has invalid-file-line-col err "sbx-bpf: error: glob.json:3:28: 'src/*.key': unsupported glob '*'"
check invalid-prints-nothing "$(cat out)" ""

printf '{"filesystem": {"denyRaed": ["~/.ssh"]}}' >typo.json
"$B" check typo.json 2>err; check unknown-key-exit-2 "$?" 2
has unknown-key-suggestion err "typo.json:1:17: unknown key 'denyRaed' in 'filesystem' (did you mean 'denyRead'?)"
"$B" check --json typo.json >out 2>/dev/null; check unknown-key-json-exit-2 "$?" 2
jq -e '.error | test("did you mean .denyRead.")' out >/dev/null && pass json-error-object ||
	fail json-error-object "$(cat out)"

printf '{"mode": "audit",}' >syntax.json
"$B" check syntax.json 2>err; check syntax-exit-2 "$?" 2
has syntax-position err "syntax.json:1:18: invalid JSON:"
printf '{"mode": "audit", "mode": "enforce"}' >dup.json
"$B" check dup.json 2>err; check duplicate-key-exit-2 "$?" 2
has duplicate-key err "dup.json:1:24: invalid JSON: duplicate object key near '\"mode\"'"
"$B" check missing.json 2>err; check missing-file-exit-2 "$?" 2
has missing-file err "missing.json: No such file or directory"

# A sandbox-runtime settings file loads as it is, with one warning per srt-only key.
"$B" check "$ROOT/tests/unit/data/srt-settings.json" >out 2>err; check srt-exit-0 "$?" 0
check srt-warning-count "$(grep -c '^sbx-bpf: warning: ' err)" 15
has srt-denied-port-warning err "srt-settings.json:11:48: '*:22': a denied name is denied on every port, not only 22"
has srt-warning-text err "srt-settings.json:19:5: ignoring 'network.httpProxyPort' (sandbox-runtime setting with no meaning for sbx-bpf)"
has srt-credentials-rule out "denyRead ~/.netrc"
"$B" check --json "$ROOT/tests/unit/data/srt-settings.json" >out 2>/dev/null
jq -e '(.warnings | length) == 15 and .policy.allowGitConfig == true' out >/dev/null &&
	pass srt-json-warnings || fail srt-json-warnings "$(jq -c .warnings out)"

for p in agent-default training restricted standard; do
	"$B" check --preset "$p" >out 2>err; check "preset-$p-exit-0" "$?" 0
	check "preset-$p-no-warnings" "$(cat err)" ""
	"$B" check --json --preset "$p" | jq -e --arg p "$p" \
		'.policy.name == $p and (.policy.description | length) > 0 and (.policy.rules | length) > 20' \
		>/dev/null && pass "preset-$p-json" || fail "preset-$p-json" "bad JSON"
done
"$B" check --preset nope 2>err; check unknown-preset-exit-2 "$?" 2
has unknown-preset err "unknown preset 'nope'"
HOME=/nonexistent-sbx-home "$B" check --preset agent-default >out
has preset-expands-home out "/nonexistent-sbx-home/.ssh"
# Under sudo, ~ is SUDO_USER's home; one that cannot be found is an error, not root's home.
SUDO_USER=root HOME=/elsewhere "$B" check --preset agent-default >out
has sudo-user-home out "$(awk -F: '$1 == "root" { print $6 }' /etc/passwd)/.ssh"
SUDO_USER=no-such-user-sbx "$B" check --preset agent-default >out 2>err
check sudo-user-unknown-exit-2 "$?" 2
has sudo-user-unknown-message err "SUDO_USER 'no-such-user-sbx' is not in /etc/passwd"
SUDO_USER=no-such-user-sbx SBX_HOME=/sbx-home "$B" check --preset agent-default >out
has sbx-home-wins out "/sbx-home/.ssh"

# Limits: check shows the cgroup writes they become; a bad value exits 2 with its place.
cat >limits.json <<'EOF'
{
  "limits": {
    "cpu": "150%",
    "memory": "2G",
    "pids": 256,
    "timeout": "1h30m"
  }
}
EOF
"$B" check limits.json >out 2>err; check limits-exit-0 "$?" 0
has limits-cpu out "  cpu.max                  150000 100000"
has limits-memory out "  memory.max               2147483648"
has limits-oom-group out "  memory.oom.group         1"
has limits-pids out "  pids.max                 256"
has limits-timeout out "  timeout                  1h30m (5400000 ms)"
"$B" check --json limits.json >out 2>/dev/null
jq -e '.policy.limits == {"cpu.max": "150000 100000", "memory.max": "2147483648",
	"memory.oom.group": "1", "pids.max": "256", "timeout_ms": 5400000}' out >/dev/null &&
	pass limits-json || fail limits-json "$(jq -c .policy.limits out)"
"$B" check --json --preset agent-default | jq -e '.policy.limits == {"memory.oom.group": "1",
	"timeout_ms": null}' >/dev/null && pass limits-json-none || fail limits-json-none "limits set"
printf '{\n  "limits": {\n    "memory": "2X"\n  }\n}\n' >badlimit.json
"$B" check badlimit.json >out 2>err; check bad-limit-exit-2 "$?" 2
has bad-limit-message err "sbx-bpf: error: badlimit.json:3:15: limits.memory 2X: not a size; use a number with an optional K, M, G or T suffix (base 1024), or 'max'"
check bad-limit-prints-nothing "$(cat out)" ""
"$B" check --json badlimit.json >out 2>/dev/null; check bad-limit-json-exit-2 "$?" 2
jq -e '.error | startswith("badlimit.json:3:15: limits.memory 2X: not a size")' out >/dev/null &&
	pass bad-limit-json-error || fail bad-limit-json-error "$(cat out)"
printf '{"limits": {"ioReadBps": ["/nonexistent-sbx/disk=5M"]}}' >baddev.json
"$B" check baddev.json 2>err; check bad-device-exit-2 "$?" 2
has bad-device-message err "baddev.json:1:27: limits.ioReadBps /nonexistent-sbx/disk=5M: /nonexistent-sbx/disk: No such file or directory"
printf '{"limits": {"cpu-weight": 50}}' >flagkey.json
"$B" check flagkey.json 2>err; check flag-spelling-exit-2 "$?" 2
has flag-spelling-suggestion err "flagkey.json:1:13: unknown key 'cpu-weight' in 'limits' (did you mean 'cpuWeight'?)"

# Network: the rules with their origins; a prefix needing too many port ranges is refused here too.
cat >net.json <<'EOF'
{
  "network": {
    "allow": ["10.0.0.0/8:443", "[2001:db8::/32]:8000-8999"],
    "deniedDomains": ["*.evil.example"],
    "allowLoopback": true
  }
}
EOF
"$B" check net.json >out 2>err; check net-exit-0 "$?" 0
has net-cidr out "    0  allow 10.0.0.0/8                       port 443          allow 10.0.0.0/8:443  [net.json:3:15]"
has net-loopback out "    5  allow ::/128                           all ports         allowLoopback  [net.json:5:22]"
has net-domain out "    0  deny  *.evil.example                   all ports         deniedDomains *.evil.example  [net.json:4:23]"
ports=$(for i in $(seq 1 2 39); do printf '"10.0.0.0/8:%d", ' "$i"; done)
printf '{"network": {"allow": [%s"10.0.0.0/8:99"]}}' "$ports" >ranges.json
"$B" check ranges.json >out 2>err; check net-ranges-exit-2 "$?" 2
has net-ranges-message err "10.0.0.0/8: needs 21 port ranges, at most 16 (ranges.json:1:24)"

"$B" check >/dev/null 2>&1; check no-policy-exit-2 "$?" 2
"$B" check --preset agent-default good.json >/dev/null 2>&1; check two-policies-exit-2 "$?" 2
"$B" check --bogus >/dev/null 2>&1; check bad-option-exit-2 "$?" 2
"$B" check --help >out; check help-exit-0 "$?" 0
has help-text out "Usage: sbx-bpf check"
"$B" --help | grep -q '^  check' && pass help-lists-check || fail help-lists-check "check missing"
exit 0
