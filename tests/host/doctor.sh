#!/usr/bin/env bash
# doctor on the build host: its verdict must match what this host really
# does, measured independently of sbx-bpf's own code:
#   - LSM loading: bpftool loads the same probe object (in a private mount
#     namespace with its own bpffs, so the host is not changed);
#   - cgroup layout: the filesystem type at /sys/fs/cgroup.
B=${BUILD:-build}/sbx-bpf
OBJ=${BUILD:-build}/probe.bpf.o
T=doctor-host
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

"$B" --json doctor >"$W/d.json" 2>/dev/null
rc=$?
jq -e . "$W/d.json" >/dev/null && pass json-parses || { fail json-parses "$(head -c 300 "$W/d.json")"; exit 0; }
status() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | .status' "$W/d.json"; }
field() { jq -r --arg n "$1" --arg f "$2" '.checks[] | select(.name == $n) | .[$f] // ""' "$W/d.json"; }

# Oracle 1: can an LSM program be loaded here at all?
if unshare -m sh -c "mount -t bpf bpf /sys/fs/bpf && bpftool prog load '$OBJ' /sys/fs/bpf/sbx-doctor-probe" \
	>"$W/bpftool.txt" 2>&1; then
	want_load=PASS
else
	want_load=FAIL
fi
got=$(status lsm_load)
[ "$got" = "$want_load" ] && pass "lsm-load-verdict-$want_load" || fail lsm-load-verdict "doctor says $got, bpftool says $want_load"
if [ "$want_load" = FAIL ]; then
	# The reason must be the one bpftool saw (EPERM on the build machines).
	if grep -q "Operation not permitted" "$W/bpftool.txt"; then
		field lsm_load detail | grep -q EPERM && pass lsm-load-reason-EPERM ||
			fail lsm-load-reason-EPERM "$(field lsm_load detail)"
		field lsm_load fix | grep -q "refuses BPF-LSM programs" && pass lsm-load-fix-explains ||
			fail lsm-load-fix-explains "$(field lsm_load fix)"
	fi
fi

# Oracle 2: the cgroup layout.
fstype=$(stat -fc %T /sys/fs/cgroup)
if [ "$fstype" = cgroup2fs ]; then want_cg=unified; else want_cg=not-unified; fi
got=$(status cgroup)
if [ "$want_cg" = unified ]; then
	[ "$got" != FAIL ] && pass cgroup-unified-accepted || fail cgroup-unified-accepted "status $got"
else
	[ "$got" = FAIL ] && pass cgroup-non-unified-fails || fail cgroup-non-unified-fails "status $got on $fstype"
	if [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		field cgroup detail | grep -q hybrid && pass cgroup-says-hybrid || fail cgroup-says-hybrid "$(field cgroup detail)"
	fi
	field cgroup fix | grep -q "systemd.unified_cgroup_hierarchy=1" && pass cgroup-fix-names-systemd-option ||
		fail cgroup-fix-names-systemd-option "$(field cgroup fix)"
fi

# Exit status and "ok" agree with the checks.
nfail=$(jq '[.checks[] | select(.status == "FAIL")] | length' "$W/d.json")
if [ "$nfail" -gt 0 ]; then want_rc=1; else want_rc=0; fi
[ "$rc" = "$want_rc" ] && pass exit-status-matches-checks || fail exit-status-matches-checks "rc $rc with $nfail FAIL"
jq -e --argjson ok "$([ "$nfail" -eq 0 ] && echo true || echo false)" '.ok == $ok' "$W/d.json" >/dev/null &&
	pass ok-field-matches || fail ok-field-matches "ok field disagrees"

# doctor must not change the host: securityfs stays as it was.
mount | grep -q ' /sys/kernel/security ' && was=1 || was=0
"$B" doctor >/dev/null 2>&1
mount | grep -q ' /sys/kernel/security ' && now=1 || now=0
[ "$was" = "$now" ] && pass doctor-leaves-mounts || fail doctor-leaves-mounts "securityfs mount changed"
exit 0
