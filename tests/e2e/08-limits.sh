# Resource limits as the kernel enforces them, timeouts, lifecycle events
# and exit codes; bad limits change nothing.
. /sbx/tests/e2e/lib.sh

CG=/sys/fs/cgroup/sbx-bpf
cd "$W"
now() { date +%s%N; }

# Limit files written, flags winning over the policy, oom.group on by default.
echo '{ "limits": { "pids": 16, "memory": "256M" } }' >"$W/lim.json"
out=$(sbx-bpf run --name e2e-files --policy "$W/lim.json" --pids 20 --cpu 150% --cpu-weight 50 -- sh -c \
	"cat $CG/e2e-files/pids.max $CG/e2e-files/memory.max $CG/e2e-files/cpu.max $CG/e2e-files/cpu.weight $CG/e2e-files/memory.oom.group" \
	2>"$W/err-files" | tr '\n' '|')
check limit-files "$out" "20|268435456|150000 100000|50|1|"

# CPU: a busy loop under --cpu 20% gets at most ~30% of one CPU (20% plus what the timing shell and
# timeout cost under an emulated CPU; unthrottled it would be ~100%), and is throttled.
out=$(sbx-bpf run --name e2e-cpu --cpu 20% -- sh -c \
	"s=\$(date +%s%N); timeout 4 sh -c 'while :; do :; done'; e=\$(date +%s%N);
	 echo \$(( (e - s) / 1000 )); cat $CG/e2e-cpu/cpu.stat" 2>/dev/null)
wall_us=$(echo "$out" | head -1)
usage=$(echo "$out" | awk '$1 == "usage_usec" { print $2 }')
throttled=$(echo "$out" | awk '$1 == "nr_throttled" { print $2 }')
share=$(( usage * 100 / wall_us ))
[ "$share" -le 30 ] && [ "$share" -ge 5 ] && pass cpu/share-at-most-30 ||
	fail cpu/share-at-most-30 "usage ${usage}us over ${wall_us}us = $share%"
[ "${throttled:-0}" -gt 0 ] && pass cpu/throttled || fail cpu/throttled "nr_throttled=$throttled"

# Memory: beyond --memory 64M the whole tree is OOM-killed (a sibling sleeper too).
sbx-bpf run --name e2e-oom --memory 64M --events "$W/ev-oom.json" -- sh -c \
	"sleep 300 & echo \$! >$W/sleeper; python3 -c 'b = bytearray(256 * 1024 * 1024)'; wait" 2>/dev/null
check oom/exit-code "$?" 123
check_json oom/event "$W/ev-oom.json" 'map(select(.type == "lifecycle" and .event == "oom_kill")) | length >= 1'
kill -0 "$(cat "$W/sleeper")" 2>/dev/null && fail oom/sibling-died "still alive" || pass oom/sibling-died

# pids: a fork bomb under --pids 32 is contained and reported.
s=$(now)
sbx-bpf run --name e2e-pids --pids 32 --events "$W/ev-pids.json" -- sh -c \
	'bomb() { bomb & bomb & wait; }; bomb' 2>/dev/null &
bpid=$!
sleep 3
max=$(cat $CG/e2e-pids/pids.current 2>/dev/null || echo 0)
[ "$max" -le 32 ] && pass pids/contained || fail pids/contained "pids.current=$max"
t=$(now); true; [ $(( ($(now) - t) / 1000000 )) -lt 2000 ] && pass pids/host-responsive || fail pids/host-responsive slow
sbx-bpf kill e2e-pids >/dev/null 2>&1 || echo 1 >$CG/e2e-pids/cgroup.kill
wait $bpid
check_json pids/event "$W/ev-pids.json" 'map(select(.type == "lifecycle" and .event == "pids_max")) | length >= 1'

# Timeout: a tree with a double-forked daemon is fully gone after --timeout 2s.
s=$(now)
sbx-bpf run --name e2e-tmo --timeout 2s --events "$W/ev-tmo.json" -- sh -c \
	'setsid sh -c "(sleep 3301 &)"; sleep 3302' 2>/dev/null
rc=$?
el=$(( ($(now) - s) / 1000000 ))
check timeout/exit-code "$rc" 124
[ $el -ge 1800 ] && [ $el -lt 30000 ] && pass timeout/after-2s || fail timeout/after-2s "${el}ms"
pgrep -f 'sleep 330[12]' >/dev/null && fail timeout/tree-gone "$(pgrep -af 'sleep 330')" || pass timeout/tree-gone
check_json timeout/event "$W/ev-tmo.json" 'map(select(.type == "lifecycle" and .event == "timeout")) | length == 1'
[ ! -e $CG/e2e-tmo ] && pass timeout/cgroup-removed || fail timeout/cgroup-removed left

# IO: dd with O_DIRECT to a file on the virtio disk under --io-write-bps DISK=1M.
if scratch_disk /mnt/disk; then
	echo '{ "filesystem": { "allowWrite": ["/mnt/disk"] } }' >"$W/io.json"
	# Timed inside the sandbox: loading sbx-bpf's programs is not part of it.
	timed='s=$(date +%s%N); dd if=/dev/zero of=$0 bs=64k count=48 oflag=direct 2>/dev/null; echo $(( ($(date +%s%N) - s) / 1000000 ))'
	el=$(sbx-bpf run --policy "$W/io.json" --io-write-bps /mnt/disk=1M -- sh -c "$timed" /mnt/disk/f 2>/dev/null)
	free=$(sbx-bpf run --policy "$W/io.json" -- sh -c "$timed" /mnt/disk/g 2>/dev/null)
	# 3 MiB at 1 MB/s: about 3 s; unthrottled the same write is much faster.
	[ "${el:-0}" -ge 2500 ] && [ "$el" -le 6000 ] && pass io/about-1MBps || fail io/about-1MBps "3 MiB took ${el}ms"
	[ $free -lt $el ] && pass io/unthrottled-faster || fail io/unthrottled-faster "${free}ms vs ${el}ms"
	umount /mnt/disk
else
	fail io/disk "no ext4 scratch disk (/dev/vda) in the VM: $(cat "$W/err-disk")"
fi

# Bad limits: exit 2, the value named, no cgroup left, the command not started.
bad() {	# bad NAME ARGS... -- expects exit 2 and no cgroup
	name=$1; shift
	rm -f "$W/ran"
	sbx-bpf run --name e2e-bad "$@" -- touch "$W/ran" 2>"$W/err-$name"
	check "bad/$name/exit-2" "$?" 2
	[ ! -e "$W/ran" ] && [ ! -e $CG/e2e-bad ] && pass "bad/$name/nothing-left" || fail "bad/$name/nothing-left" "ran or cgroup left"
}
bad memory-2X --memory 2X
grep -q -- "--memory 2X" "$W/err-memory-2X" && pass bad/memory-2X/message || fail bad/memory-2X/message "$(cat "$W/err-memory-2X")"
bad cpu-0 --cpu 0%
grep -q -- "--cpu 0%" "$W/err-cpu-0" && pass bad/cpu-0/message || fail bad/cpu-0/message "$(cat "$W/err-cpu-0")"
bad cpu-abc --cpu abc
grep -q -- "--cpu abc" "$W/err-cpu-abc" && pass bad/cpu-abc/message || fail bad/cpu-abc/message "$(cat "$W/err-cpu-abc")"
bad no-device --io-write-bps /nonexistent-disk=1M
grep -q "/nonexistent-disk" "$W/err-no-device" && pass bad/no-device/message || fail bad/no-device/message "$(cat "$W/err-no-device")"
echo '{ "limits": { "memory": "lots" } }' >"$W/badlim.json"
bad policy-limit --policy "$W/badlim.json"
grep -q "badlim.json:1:" "$W/err-policy-limit" && pass bad/policy-limit/position || fail bad/policy-limit/position "$(cat "$W/err-policy-limit")"

# A delegated subtree (what a systemd unit with Delegate=yes gets): with
# SBX_CGROUP_ROOT, sandboxes go below it, controllers are enabled only from
# there down, and a process already in it moves to a leaf (no internal processes).
D=/sys/fs/cgroup/e2e-delegated
mkdir -p $D && echo "+pids +memory" >/sys/fs/cgroup/cgroup.subtree_control
sleep 300 & squatter=$!
echo $squatter >$D/cgroup.procs
out=$(SBX_CGROUP_ROOT=$D sbx-bpf run --name d1 --pids 12 -- sh -c "cat $D/d1/pids.max; sleep 0.5" 2>"$W/err-deleg")
check delegated/limit-in-subtree "$out" 12
grep -qx "$squatter" $D/sbx-bpf-leaf/cgroup.procs && pass delegated/process-moved-to-leaf ||
	fail delegated/process-moved-to-leaf "$(cat $D/cgroup.procs 2>&1) / $(cat "$W/err-deleg")"
[ ! -e $D/d1 ] && [ ! -e /sys/fs/cgroup/sbx-bpf/d1 ] && pass delegated/cleaned-up || fail delegated/cleaned-up left
SBX_CGROUP_ROOT=/tmp sbx-bpf run -- true 2>"$W/err-deleg2"
check delegated/outside-cgroupfs-exit-1 "$?" 1
kill $squatter
