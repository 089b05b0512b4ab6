# Helpers for the e2e tests that run as root inside the test VM.
# Each check appends one "PASS name" or "FAIL name: why" line to $SBX_RESULT_LOG.
set -u
T=${SBX_TEST:-$(basename "$0" .sh)}
LOG=${SBX_RESULT_LOG:-/dev/stdout}
W=$(mktemp -d /tmp/e2e.XXXXXX)

pass() { echo "PASS $T/$1" >>"$LOG"; }
fail() { echo "FAIL $T/$1: $2" >>"$LOG"; echo "FAIL $T/$1: $2" >&2; }

# A file run on the shared programs (init.sh) fails loudly when they are not there:
# its runs and daemons would load their own, and prove nothing about the shared set.
if { [ "${SBX_PROGRAMS:-}" = shared ] || [ "${SBX_PROGRAMS:-}" = pinned ]; } && [ ! -e /sys/fs/bpf/sbx/meta ]; then
	fail programs-loaded "the shared programs are not pinned at /sys/fs/bpf/sbx (see vm/shared-programs-loaded)"
fi

# check NAME GOT WANT
check() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# check_json NAME FILE JQ-FILTER: the filter must print "true" for FILE.
check_json() {
	got=$(jq -s -e "$3" "$2" 2>&1) && [ "$got" = true ] && { pass "$1"; return; }
	fail "$1" "jq '$3' on $(wc -l <"$2") event(s) gave '$got'; events: $(head -c 600 "$2")"
}

# wait_event NAME FILE FILTER: up to 5 s for the daemon to write an event matching FILTER to FILE.
wait_event() {
	i=0
	while [ $i -lt 50 ] && [ "$(jq -s "$3" "$2" 2>/dev/null)" != true ]; do sleep 0.1; i=$((i + 1)); done
	check_json "$1" "$2" "$3"
}

# Wait up to $2 tenths of a second for file $1.
wait_for() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}

# unload_pids, wait_unloads: the children holding a finished run's own links
. /sbx/tests/vm/unloads.sh

# scratch_disk DIR: the VM's scratch disk (/dev/vda) formatted ext4 afresh and
# mounted at DIR; 1 when there is none, the reason in $W/err-disk
# (virtio_pci is built in on 6.12, a module on 6.1). One user at a time:
# each formats it again, so unmount it when done.
scratch_disk() {
	modprobe virtio_pci 2>"$W/err-disk"; modprobe virtio_blk 2>>"$W/err-disk"; modprobe ext4 2>>"$W/err-disk"
	wait_for /dev/vda 100 && [ -b /dev/vda ] || { ls /sys/block >>"$W/err-disk"; return 1; }
	mkfs.ext4 -q -F /dev/vda 2>>"$W/err-disk" && mkdir -p "$1" && mount /dev/vda "$1" 2>>"$W/err-disk"
}

# memo_kept NAME CGROUP-DIR SBX-MEMO-ARGS…: sbx-memo shows a memo, with steps, made by a task of
# that cgroup (tests/vm/sbx-memo.c: a file's open memo, or --dir DIR's directory memo).
memo_kept() {
	_name=$1 _cg=$2
	shift 2
	_got=$(sbx-memo "$@" 2>&1)
	case "$_got" in
	"cgroup=$(stat -c %i "$_cg") steps="[1-9]*) pass "$_name" ;;
	*) fail "$_name" "sbx-memo $*: $_got" ;;
	esac
}

# memo_cgroups NAME: the cgroups the memo tests (25, 26) judge from, made under /sys/fs/cgroup:
# CG (e2e-NAME, the sandbox a memo is made in), CG2 (another sandbox), TOP and TOP/inner (one
# attached above another), CGA (auditing), CGG (granted).
memo_cgroups() {
	CG=/sys/fs/cgroup/e2e-$1
	CG2=$CG-other
	TOP=$CG-top
	CGA=$CG-audit
	CGG=$CG-grant
	mkdir -p "$CG" "$CG2" "$TOP/inner" "$CGA" "$CGG"
}

# memo_daemon POLICY OTHER-POLICY: a daemon writing events to $W/ev.json (its pid in D), CG
# attached under POLICY, and CG2 under OTHER-POLICY from the start: nothing changes between a
# memo CG2's task could use and the use.
memo_daemon() {
	sbx-bpf daemon --events "$W/ev.json" 2>"$W/d.err" &
	D=$!
	wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d.err")"
	sbx-bpf attach "$CG" --policy "$1" 2>"$W/a.err"
	check attach/exit "$?" 0
	sbx-bpf attach "$CG2" --policy "$2" 2>>"$W/a.err"
	check attach/other "$?" 0
}

# memo_cgroups_end: each of them detached, memo_daemon's daemon stopped, the cgroups removed.
memo_cgroups_end() {
	for c in "$CG" "$CG2" "$TOP/inner" "$TOP" "$CGA" "$CGG"; do sbx-bpf detach "$c" 2>>"$W/a.err"; done
	kill "$D"
	wait "$D" 2>/dev/null
	rmdir "$TOP/inner" "$TOP" "$CG" "$CG2" "$CGA" "$CGG" 2>/dev/null
}
