#!/usr/bin/env bash
# The error paths of every command that need no BPF-LSM (docs/commands.md,
# "Exit codes"): each exits with its documented code, says what is wrong in
# one "sbx-bpf: error:" line ({"error": …} with --json), and changes nothing:
# no command started, no cgroup (but one empty one, for the check that reaches the pins), pin or
# record made, no file touched.
# (grant/revoke/grants, stats/freeze/thaw/kill, check and events have their
# own scripts; what needs the kernel is in the VM suite.)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$ROOT/build}/sbx-bpf
T=errors
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
has() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "no '$3' in: $(head -c 400 "$2")"; fi; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
STATE=/run/sbx-bpf/sandboxes
records() { ls "$STATE" 2>/dev/null | grep -c '^[0-9]*\.json$'; }	# not builtin-HASH.json
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=${V2:-/sys/fs/cgroup}/sbx-host-errors-$$	# never created
before=$(records)

echo '{ "filesystem": { "denyRead": [ "/nonexistent-sbx/secret" ] } }' >good.json
printf '{\n  "filesystem": { "denyRead": [ 1 ] }\n}\n' >bad.json
printf '{ "mode": "audit" }\n\0{}\n' >nul.json

# want NAME CODE MESSAGE -- ARGS: exit CODE, MESSAGE on stderr, nothing on stdout.
want() {
	local name=$1 code=$2 msg=$3; shift 4
	"$B" "$@" >out 2>err; check "$name-exit-$code" "$?" "$code"
	has "$name-message" err "$msg"
	[ -s out ] && fail "$name-no-output" "$(head -c 200 out)" || pass "$name-no-output"
}

# --- run: a bad policy or flag stops it before anything exists ----------------------------
want run-missing-policy 2 "sbx-bpf: error: missing.json: No such file or directory" -- \
	run --policy missing.json -- touch started
want run-bad-policy 2 "sbx-bpf: error: bad.json:2:33: 'filesystem.denyRead[0]' must be a string, not a number" -- \
	run --policy bad.json -- touch started
want run-nul-policy 2 "sbx-bpf: error: nul.json: contains a NUL byte" -- run --policy nul.json -- touch started
want run-unknown-preset 2 "sbx-bpf: error: unknown preset 'nope' (one of: agent-default, training, restricted, standard)" -- \
	run --preset nope -- touch started
want run-policy-and-preset 2 "sbx-bpf: error: run: --policy and --preset exclude each other" -- \
	run --policy good.json --preset standard -- touch started
want run-bad-memory 2 "sbx-bpf: error: run: --memory 2X: not a size" -- run --memory 2X -- touch started
want run-bad-timeout 2 "sbx-bpf: error: run: --timeout 1y: not a duration" -- run --timeout 1y -- touch started
want run-bad-rule 2 "sbx-bpf: error: --allow-write: '/a/*.txt': unsupported glob '*'" -- \
	run --allow-write '/a/*.txt' -- touch started
"$B" --json run --policy bad.json -- touch started >out 2>/dev/null; check run-json-exit-2 "$?" 2
jq -e '.error | startswith("bad.json:2:33:")' out >/dev/null && pass run-json-error || fail run-json-error "$(cat out)"
[ ! -e started ] && pass run-started-nothing || fail run-started-nothing "the command ran"
[ -z "$V2" ] || [ -z "$(ls -d "$V2"/sbx-bpf/run-* 2>/dev/null)" ] && pass run-no-cgroup ||
	fail run-no-cgroup "$(ls -d "$V2"/sbx-bpf/run-*)"

want doctor-argument 2 "sbx-bpf: error: doctor takes no arguments (got 'extra')" -- doctor extra

# --- attach: the policy and the flags are checked before the cgroup, the cgroup before the pins -----
"$B" attach >out 2>err; check attach-no-cgroup-exit-2 "$?" 2
has attach-no-cgroup-usage err "Usage: sbx-bpf attach CGROUP"
"$B" attach "$CG" other --policy good.json >/dev/null 2>&1; check attach-two-cgroups-exit-2 "$?" 2
"$B" attach "$CG" --bogus --policy good.json >/dev/null 2>&1; check attach-bad-option-exit-2 "$?" 2
want attach-no-policy 2 "sbx-bpf: error: attach: give exactly one of --policy and --preset" -- attach "$CG"
want attach-two-policies 2 "sbx-bpf: error: attach: give exactly one of --policy and --preset" -- \
	attach "$CG" --policy good.json --preset standard
want attach-missing-policy 2 "sbx-bpf: error: missing.json: No such file or directory" -- \
	attach "$CG" --policy missing.json --pin-dir "$W/pins"
want attach-bad-policy 2 "sbx-bpf: error: bad.json:2:33: 'filesystem.denyRead[0]' must be a string" -- \
	attach "$CG" --policy bad.json --pin-dir "$W/pins"
printf '{"network": {"allow": [%s"10.0.0.0/8:99"]}}' "$(for p in $(seq 1000 2 1038); do printf '"10.0.0.0/8:%d", ' "$p"; done)" >ranges.json
want attach-port-ranges 2 "sbx-bpf: error: 10.0.0.0/8: needs 21 port ranges, at most 16 (ranges.json:1:24)" -- \
	attach "$CG" --policy ranges.json --pin-dir "$W/pins"
want attach-unknown-preset 2 "sbx-bpf: error: unknown preset 'nope'" -- attach "$CG" --preset nope
want attach-unknown-cgroup 1 "sbx-bpf: error: cannot find cgroup '$CG': No such file or directory" -- \
	attach "$CG" --policy good.json --pin-dir "$W/pins"
want attach-bad-name 1 "sbx-bpf: error: cannot find cgroup '..': not a sandbox name" -- \
	attach .. --policy good.json --pin-dir "$W/pins"
if [ -n "$V2" ]; then
	want attach-outside 1 "sbx-bpf: error: cannot find cgroup '/etc/': not in the cgroup v2 hierarchy ($V2)" -- \
		attach /etc/ --policy good.json --pin-dir "$W/pins"
	want attach-not-a-cgroup 1 "sbx-bpf: error: cannot find cgroup '$V2/cgroup.procs': not a cgroup directory" -- \
		attach "$V2/cgroup.procs" --policy good.json --pin-dir "$W/pins"
	# A real cgroup (the root cannot be a sandbox: tests/host/attach.sh) gets as far as the pins;
	# made empty and removed, where it can be (root, a writable cgroup2), as lifecycle.sh does.
	if [ "$(id -u)" = 0 ] && mkdir "$V2/sbx-host-errors-cg-$$" 2>/dev/null; then
		want attach-no-pins 1 "sbx-bpf: error: no usable programs pinned at $W/pins: No such file or directory (start 'sbx-bpf daemon')" -- \
			attach "$V2/sbx-host-errors-cg-$$/" --policy good.json --pin-dir "$W/pins"
		rmdir "$V2/sbx-host-errors-cg-$$"
	else
		echo "# errors: no writable cgroup2 here; attach-no-pins skipped"
	fi
fi
"$B" --json attach "$CG" --policy bad.json >out 2>/dev/null; check attach-json-exit-2 "$?" 2
jq -e '.error | startswith("bad.json:2:33:")' out >/dev/null && pass attach-json-error || fail attach-json-error "$(cat out)"

# --- detach, list --------------------------------------------------------------------------------
"$B" detach >/dev/null 2>&1; check detach-no-cgroup-exit-2 "$?" 2
"$B" detach "$CG" other >/dev/null 2>&1; check detach-two-cgroups-exit-2 "$?" 2
"$B" detach --bogus "$CG" >/dev/null 2>&1; check detach-bad-option-exit-2 "$?" 2
want detach-unknown-cgroup 1 "sbx-bpf: error: cannot find cgroup '$CG': No such file or directory" -- \
	detach "$CG" --pin-dir "$W/pins"
[ -n "$V2" ] && want detach-no-pins 1 "sbx-bpf: error: no usable programs pinned at $W/pins" -- \
	detach "$V2/" --pin-dir "$W/pins"
"$B" list extra >/dev/null 2>&1; check list-argument-exit-2 "$?" 2
"$B" list --bogus >/dev/null 2>&1; check list-bad-option-exit-2 "$?" 2
want list-no-pins 1 "sbx-bpf: error: no usable programs pinned at $W/pins: No such file or directory" -- \
	list --pin-dir "$W/pins"
"$B" --json list --pin-dir "$W/pins" >out 2>/dev/null; check list-json-exit-1 "$?" 1
jq -e '(keys == ["error"]) and (.error | startswith("no usable programs pinned at"))' out >/dev/null &&
	pass list-json-error || fail list-json-error "$(cat out)"

# --- status, unload --------------------------------------------------------------------------------
"$B" status extra >/dev/null 2>&1; check status-argument-exit-2 "$?" 2
"$B" status --events x >/dev/null 2>&1; check status-daemon-option-exit-2 "$?" 2
"$B" status --pin-dir "$W/pins" >out 2>err; check status-not-pinned-exit-1 "$?" 1
has status-not-pinned-says-so out "enforcement: not pinned"
"$B" --json status --pin-dir "$W/pins" >out 2>/dev/null; check status-json-exit-1 "$?" 1
jq -e '.pinned == false and .reason == "No such file or directory" and .maps == {}' out >/dev/null &&
	pass status-json-reason || fail status-json-reason "$(cat out)"
"$B" unload extra >/dev/null 2>&1; check unload-argument-exit-2 "$?" 2
"$B" unload --config x >/dev/null 2>&1; check unload-daemon-option-exit-2 "$?" 2
"$B" unload --pin-dir "$W/none" >out 2>err; check unload-nothing-pinned-exit-0 "$?" 0
mkdir -p notbpf/maps notbpf/links && touch notbpf/maps/keep notbpf/links/keep notbpf/meta
want unload-not-bpffs 2 "sbx-bpf: error: unload: $W/notbpf is not on a BPF file system (bpffs)" -- \
	unload --pin-dir "$W/notbpf"
[ -e notbpf/maps/keep ] && [ -e notbpf/links/keep ] && [ -e notbpf/meta ] && pass unload-not-bpffs-removes-nothing ||
	fail unload-not-bpffs-removes-nothing "$(ls -R notbpf)"
BPFFS=$(awk '$9 == "bpf" { print $5; exit }' /proc/self/mountinfo)
if [ -n "$BPFFS" ] && mkdir "$BPFFS/sbx-host-errors-$$" 2>/dev/null; then
	"$B" unload --pin-dir "$BPFFS/sbx-host-errors-$$" >out 2>err; check unload-empty-set-exit-0 "$?" 0
	[ ! -e "$BPFFS/sbx-host-errors-$$" ] && pass unload-empty-set-removed ||
		{ fail unload-empty-set-removed "still there"; rmdir "$BPFFS/sbx-host-errors-$$"; }
fi

# --- daemon: options, --events and --config are checked before the lock, the load or the pins ---------
"$B" daemon extra >/dev/null 2>&1; check daemon-argument-exit-2 "$?" 2
"$B" daemon --bogus >/dev/null 2>&1; check daemon-bad-option-exit-2 "$?" 2
"$B" daemon --coalesce-ms abc --pin-dir "$W/pins" >/dev/null 2>err; check daemon-coalesce-exit-2 "$?" 2
has daemon-coalesce-message err "sbx-bpf: error: --coalesce-ms: 'abc' is not a whole number from 0 to 3600000"
"$B" daemon --event-rate -1 --pin-dir "$W/pins" >/dev/null 2>err; check daemon-rate-exit-2 "$?" 2
has daemon-rate-message err "sbx-bpf: error: --event-rate: '-1' is not a whole number"
"$B" daemon --event-burst 1000001 --pin-dir "$W/pins" >/dev/null 2>&1; check daemon-burst-exit-2 "$?" 2
want daemon-events-dir 2 "sbx-bpf: error: cannot open events file '$W/no-dir/ev.jsonl': No such file or directory" -- \
	daemon --events "$W/no-dir/ev.jsonl" --pin-dir "$W/pins" --socket "$W/ev.sock"
want daemon-missing-config 2 "sbx-bpf: error: $W/missing-agent.json: No such file or directory" -- \
	daemon --config "$W/missing-agent.json" --pin-dir "$W/pins" --socket "$W/ev.sock"
printf '{\n  "sinks": [ { "type": "jsonl", "paht": "/x" } ]\n}\n' >agent-typo.json
want daemon-bad-config 2 "sbx-bpf: error: agent-typo.json:2:33: unknown key 'paht' in sinks[0]" -- \
	daemon --config agent-typo.json --pin-dir "$W/pins" --socket "$W/ev.sock"
"$B" daemon --events ev.jsonl --config agent-typo.json --pin-dir "$W/pins" >/dev/null 2>&1
check daemon-bad-config-before-events-exit-2 "$?" 2
[ ! -e ev.jsonl ] && pass daemon-bad-config-creates-no-events-file || fail daemon-bad-config-creates-no-events-file "ev.jsonl exists"
printf '{ "sinks": [ { "type": "jsonl", "path": "%s/no-dir/ev.jsonl" } ] }\n' "$W" >agent-nodir.json
want daemon-sink-cannot-open 1 "sbx-bpf: error: agent-nodir.json:1:14: cannot open '$W/no-dir/ev.jsonl': No such file or directory" -- \
	daemon --config agent-nodir.json --pin-dir "$W/pins" --socket "$W/ev.sock"
"$B" --json daemon --config agent-typo.json --pin-dir "$W/pins" >out 2>/dev/null; check daemon-json-exit-2 "$?" 2
jq -e '.error | startswith("agent-typo.json:2:33:")' out >/dev/null && pass daemon-json-error || fail daemon-json-error "$(cat out)"
[ ! -e "$W/pins" ] && pass nothing-pinned || fail nothing-pinned "$(ls -R "$W/pins")"
[ ! -e "$W/ev.sock" ] && pass no-socket || fail no-socket "$W/ev.sock exists"
check no-record-written "$(records)" "$before"
exit 0
