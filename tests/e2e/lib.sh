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

# memo_kept NAME CGROUP-DIR [need=NEED] SBX-MEMO-ARGS…: sbx-memo shows a memo, with steps, made
# by a task of that cgroup (tests/vm/sbx-memo.c: a file's open memo, or --dir DIR's directory
# memo), and, with need=, allowing exactly NEED (r, w or rw).
memo_kept() {
	_name=$1 _cg=$2 _need=
	shift 2
	case "$1" in need=*) _need=" $1"; shift ;; esac
	_got=$(sbx-memo "$@" 2>&1)
	case "$_got" in
	"cgroup=$(stat -c %i "$_cg") steps="[1-9]*"$_need") pass "$_name" ;;
	*) fail "$_name" "sbx-memo $*: $_got${_need:+ (wanted$_need)}" ;;
	esac
}

# memo_settle NAME CGROUP-DIR SBX-MEMO-ARG… -- PROBE-ARG…: the probe run again in that cgroup
# (allowed: the memo's walk holds, or it is settled already), and the memo shown settled
# (sbx-memo: settled=J, J not 0): until jiffy J its checks go without the walk while the kernel's
# move counts stand still (bpf/fs.bpf.c memo_unmoved). memo_in_window NAME, after what must not go
# by it: the kernel's jiffies (/proc/timer_list) are still before J, so the memo was settled when
# that was checked.
memo_settled() { sbx-memo "$@" 2>&1 | sed -n 's/.* settled=\([0-9]*\) .*/\1/p' | head -n 1; }
# memo_seq SBX-MEMO-ARG…: the memo's sequence count, which every write of it moves (a settle too).
memo_seq() { sbx-memo "$@" 2>&1 | sed -n 's/.* seq=\([0-9]*\) .*/\1/p' | head -n 1; }
memo_settle() {
	_name=$1 _cg=$2 _margs=
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _margs="$_margs $1"; shift; done
	shift
	# Settled already, it would stay so until its old deadline: let that pass, for a fresh one.
	[ "$(memo_settled $_margs)" = 0 ] || sleep 1.1
	check "$_name/again" "$(probe_in "$_cg" "$@")" OK
	_settled=$(memo_settled $_margs)
	case "$_settled" in
	'' | 0) fail "$_name/settled" "sbx-memo$_margs: $(sbx-memo $_margs 2>&1)" ;;
	*) pass "$_name/settled" ;;
	esac
}
memo_in_window() {
	_j=$(awk '/^jiffies:/ { print $2; exit }' /proc/timer_list)
	# Jiffies left (32 bits, as the programs count): 1 to 250 (MOVES_WINDOW) while it stands.
	_left=$(((${_settled:-0} - ${_j:-0}) & 0xffffffff))
	if [ -n "$_j" ] && [ "$_left" -ge 1 ] && [ "$_left" -le 250 ]; then
		pass "$1"
	else
		fail "$1" "jiffies ${_j:-unread}, the memo settled until ${_settled:-0}: past its window, that check walked"
	fi
}

# memo_unwalked NAME CGROUP-DIR SBX-MEMO-ARG… -- PROBE-ARG…, after memo_settle: the probe run again
# in that cgroup goes by the settled memo without its walk, so the memo keeps the deadline it had (a
# walk that holds would settle it anew, jiffies later). A probe that creates (open PATH creat)
# finds PATH removed first, from outside the sandbox: an unlink moves nothing. Anything else on
# the system that moves a dentry or a mount in between makes the check walk: four tries.
memo_unwalked() {
	_name=$1 _cg=$2 _margs= _seen=
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _margs="$_margs $1"; shift; done
	shift
	_before=$(memo_settled $_margs)
	for _try in 1 2 3 4; do
		[ "$1 ${3:-}" = "open creat" ] && rm -f "$2"
		sleep 0.05	# 12 jiffies at HZ 250: a walk's deadline would be later
		_r=$(probe_in "$_cg" "$@")
		[ "$_r" = OK ] || { fail "$_name" "sbx-probe $*: $_r"; return; }
		_now=$(memo_settled $_margs)
		if [ -n "$_now" ] && [ "$_now" != 0 ] && [ "$_now" = "$_before" ]; then
			pass "$_name"
			return
		fi
		_seen="$_seen $_before->$_now"
		_before=$_now
	done
	fail "$_name" "settled anew at each try ($_seen): every check walked"
}

# in_cg CGROUP-DIR CMD…: CMD run in that cgroup.
in_cg() { _cg=$1; shift; sh -c 'echo $$ >'"$_cg"'/cgroup.procs && exec "$@"' sh "$@"; }

# probe_in CGROUP-DIR ARGS…: sbx-probe ARGS run in that cgroup; what it printed (OK or the errno's name).
probe_in() { _pcg=$1; shift; in_cg "$_pcg" sbx-probe "$@" 2>/dev/null; }

# memo_denied NAME OP PATH [CGROUP-DIR]: OP of PATH by a task of that cgroup (CG's by default)
# refused with EACCES, and reported so in $W/ev.json.
memo_denied() {
	wait_event "$1" "$W/ev.json" \
		"any(.[]; .type == \"violation\" and .op == \"$2\" and .path == \"$3\" and .errno == 13 and
		 .verdict == \"denied\" and .cgroup_id == $(stat -c %i "${4:-$CG}"))"
}

# memo_never_reported OP PATH MODE: an OP (read or write) of PATH (sbx-probe open PATH MODE) that is
# reported keeps no memo of PATH: by a task of CGA, attached here auditing $W/p.json, and by one of
# CGG, attached under it and granted the OP of PATH, which is refused once the grant is revoked.
memo_never_reported() {
	sbx-bpf attach "$CGA" --audit --policy "$W/p.json" 2>>"$W/a.err"
	check audit/attach "$?" 0
	check "audit/$1" "$(probe_in "$CGA" open "$2" "$3")" OK
	check audit/no-memo "$(sbx-memo "$2")" none
	wait_event audit/event "$W/ev.json" \
		"any(.[]; .op == \"$1\" and .path == \"$2\" and .verdict == \"audit\" and
		 .cgroup_id == $(stat -c %i "$CGA"))"
	sbx-bpf attach "$CGG" --policy "$W/p.json" 2>>"$W/a.err"
	check grant/attach "$?" 0
	sbx-bpf grant "$CGG" "--$1" "$2" --ttl 60s >"$W/g.out" 2>&1
	check grant/exit "$?" 0
	check "grant/$1" "$(probe_in "$CGG" open "$2" "$3")" OK
	check grant/no-memo "$(sbx-memo "$2")" none
	sbx-bpf revoke "$CGG" "$(sed -n 's/^grant \([0-9]*\):.*/\1/p' "$W/g.out")" >"$W/r.out" 2>&1
	check grant/revoke "$?" 0
	check grant/denied-after-revoke "$(probe_in "$CGG" open "$2" "$3")" EACCES
	memo_denied grant/event "$1" "$2" "$CGG"
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
