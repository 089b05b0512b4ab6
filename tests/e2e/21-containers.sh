# Containers put under a policy by the engines themselves, through the OCI
# hook (`sbx-bpf oci-hook`): runc and crun with a bundle whose config.json
# lists it, podman through hooks.d. Each verdict is checked for the errno
# inside the container and for its event, which carries the container's
# labels (id, name). Also: a container without the annotation is left
# alone; a bad annotation stops the container from starting, with the
# hook's message, and attaches nothing; a daemon killed with -9 leaves the
# container enforced and its stop still cleans up; a container whose engine
# vanished (cgroup removed, no poststop) is forgotten by the daemon; and
# many containers in a row leave the maps as they were.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh
cd "$W"

SBX=$(command -v sbx-bpf)
EV=$W/ev.jsonl
: >"$EV"
start_daemon() {
	rm -f /run/sbx-bpf/events.sock	# one a daemon killed with -9 left
	sbx-bpf daemon --events "$EV" 2>>"$W/d.err" &
	D=$!
	wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(tail -5 "$W/d.err")"
}
start_daemon

# --- an image: busybox (with its libraries), sbx-probe, a key in root's home --------------
. /sbx/tests/vm/containers.sh
ROOT=$W/rootfs
container_rootfs "$ROOT"

# A policy with limits: agent-default's reads and writes, and 16 tasks at most.
cat >"$W/limited.json" <<'EOF'
{ "filesystem": { "denyRead": [ "~/.ssh" ], "allowWrite": [ "/tmp" ] }, "limits": { "pids": 16 } }
EOF

# bundle DIR ID CGROUP POLICY ARGS…: a runc/crun bundle on the shared rootfs that runs ARGS,
# with the hook at createRuntime and poststop ("" POLICY: no annotation).
bundle() {
	dir=$1 id=$2 cg=$3 pol=$4
	shift 4
	mkdir -p "$dir"
	args=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
	# crun drops a hook's stderr unless told where to put it.
	ann=$([ -n "$pol" ] && jq -n -c --arg p "$pol" --arg e "$W/hook-$id.err" \
		'{"io.sbx-bpf.policy": $p, "io.sbx-bpf.name": "bundle-'"$id"'", "run.oci.hooks.stderr": $e}' || echo '{}')
	rm -f "$dir/config.json"
	runc spec --bundle "$dir"
	jq --arg root "$ROOT" --argjson args "$args" --argjson ann "$ann" --arg cg "$cg" --arg sbx "$SBX" '
		.root = {path: $root, readonly: false} | .process.terminal = false | .process.args = $args |
		.process.cwd = "/work" | .annotations = $ann | .linux.cgroupsPath = $cg |
		.hooks = {createRuntime: [{path: $sbx, args: ["sbx-bpf", "oci-hook", "createRuntime"]}],
			  poststop: [{path: $sbx, args: ["sbx-bpf", "oci-hook"]}]}' \
		"$dir/config.json" >"$dir/c.json" && mv "$dir/c.json" "$dir/config.json"
}

# The VM's root is its initramfs, which pivot_root cannot leave: the engines move the
# container's root over / and chroot instead (--no-pivot). Paths inside are the same.
# in_engine ENGINE NAME POLICY ARGS…: ARGS in a fresh container of ENGINE (runc or crun); its output.
in_engine() {
	eng=$1 id=$2 pol=$3
	shift 3
	bundle "$W/b-$id" "$id" "/sbx-e2e-$id" "$pol" "$@"
	"$eng" run --no-pivot --bundle "$W/b-$id" "$id" 2>"$W/$id.err" </dev/null
	[ -s "$W/$id.err" ] && sed "s/^/INFO $T\/$id: /" "$W/$id.err" | head -5 >>"$LOG"
	return 0
}

# ev_for NAME ID OP PATH ERRNO: the daemon's event for container ID, with its labels.
ev_for() {
	wait_event "$1" "$EV" "any(.[]; .type == \"violation\" and .op == \"$3\" and .path == \"$4\" and
		.errno == $5 and .labels[\"container.id\"] == \"$2\")"
}
ev_net() {
	wait_event "$1" "$EV" "any(.[]; .type == \"violation\" and .op == \"connect\" and .errno == 13 and
		.labels[\"container.id\"] == \"$2\")"
}
nothing_attached() { sbx-bpf list --json 2>/dev/null | jq length; }

for eng in runc crun; do
	command -v "$eng" >/dev/null || { fail "$eng/installed" "no $eng in the VM"; continue; }
	check "$eng/read-denied" "$(in_engine "$eng" "$eng-r" agent-default sbx-probe open /root/.ssh/id_rsa)" EACCES
	ev_for "$eng/read-event" "$eng-r" read /root/.ssh/id_rsa 13
	wait_event "$eng/read-event-name" "$EV" "any(.[]; .labels[\"container.name\"] == \"bundle-$eng-r\")"
	check "$eng/without-annotation-read" "$(in_engine "$eng" "$eng-n" "" sbx-probe open /root/.ssh/id_rsa)" OK
	check "$eng/write-denied" "$(in_engine "$eng" "$eng-w" agent-default sbx-probe open /root/new-$eng creat)" EACCES
	ev_for "$eng/write-event" "$eng-w" create /root/new-$eng 13
	check "$eng/write-allowed-tmp" "$(in_engine "$eng" "$eng-t" agent-default sbx-probe open /tmp/new-$eng creat)" OK
	# What the kernel does with a connect or at a limit does not depend on the engine: runc's
	# are checked here, crun's through podman below (podman runs crun).
	if [ "$eng" = runc ]; then
		# A new network namespace has no route: without a policy the connect fails otherwise.
		check "$eng/connect-denied" "$(in_engine "$eng" "$eng-c" agent-default sbx-probe connect 10.1.2.3 80)" EACCES
		ev_net "$eng/connect-event" "$eng-c"
		check "$eng/without-annotation-connect" \
			"$(in_engine "$eng" "$eng-cn" "" sbx-probe connect 10.1.2.3 80)" ENETUNREACH
		check "$eng/pids-limit" "$(in_engine "$eng" "$eng-p" "$W/limited.json" sbx-probe forks 40)" EAGAIN
		wait_event "$eng/pids-event" "$EV" "any(.[]; .type == \"lifecycle\" and .event == \"pids_max\" and
			.labels[\"container.id\"] == \"$eng-p\")"
		check "$eng/pids-without" "$(in_engine "$eng" "$eng-pn" "" sbx-probe forks 40)" OK
	fi
	check "$eng/cleaned-up" "$(nothing_attached)" 0
	# A bad annotation: the container does not start, the engine shows why, nothing is attached.
	out=$(in_engine "$eng" "$eng-bad" no-such-preset sh -c 'echo RAN' 2>&1; cat "$W/$eng-bad.err" \
		"$W/hook-$eng-bad.err" 2>/dev/null)
	case $out in *RAN*) fail "$eng/bad-annotation-refused" "the container ran: $out" ;;
	*"not attached"*) pass "$eng/bad-annotation-refused" ;;
	*) fail "$eng/bad-annotation-refused" "no hook message: $out" ;; esac
	check "$eng/bad-annotation-nothing" "$(nothing_attached)" 0
	"$eng" delete -f "$eng-bad" >/dev/null 2>&1
done

# --- the daemon killed with -9 while a container runs ------------------------------------
rm -f "$ROOT/tmp/go" "$ROOT/tmp/result"
bundle "$W/b-k9" k9 /sbx-e2e-k9 agent-default sh -c \
	'while [ ! -e /tmp/go ]; do sleep 0.1; done; sbx-probe open /root/.ssh/id_rsa >/tmp/result'
runc run --no-pivot --bundle "$W/b-k9" k9 >/dev/null 2>"$W/k9.err" </dev/null &
K9=$!
i=0
while [ "$(runc state k9 2>/dev/null | jq -r .status)" != running ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check kill9/attached "$(nothing_attached)" 1
kill -9 "$D"
wait "$D" 2>/dev/null
touch "$ROOT/tmp/go"
wait_for "$ROOT/tmp/result" 100
check kill9/still-denied "$(cat "$ROOT/tmp/result" 2>/dev/null)" EACCES
start_daemon
wait "$K9"
check kill9/stop-cleans-up "$(nothing_attached)" 0

# --- an engine that vanished: cgroup removed, no poststop; the daemon forgets it ----------
bundle "$W/b-gone" gone /sbx-e2e-gone agent-default sleep 600
runc run -d --no-pivot --bundle "$W/b-gone" gone >/dev/null 2>"$W/gone.err" </dev/null
check gone/attached "$(nothing_attached)" 1
runc kill gone KILL
i=0
while ! rmdir /sys/fs/cgroup/sbx-e2e-gone 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
wait_event gone/event "$EV" 'any(.[]; .type == "lifecycle" and .event == "gone")'
i=0
while [ "$(nothing_attached)" != 0 ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
check gone/forgotten "$(nothing_attached)" 0
runc delete -f gone >/dev/null 2>&1

# --- many containers in a row leave the maps as they were ---------------------------------
# 15 in `make test` (about 12 s under TCG per kernel); SBX_CONTAINERS_N=100 scripts/vm.sh test for more.
maps() { sbx-bpf status --json | jq -c '[.maps | to_entries[] | select(.key != "events") | {(.key): .value.entries}] | add'; }
before=$(maps)
N=${SBX_CONTAINERS_N:-15}
bundle "$W/b-many" many /sbx-e2e-many agent-default sbx-probe open /root/.ssh/id_rsa
t0=$(date +%s)
denied=0
for i in $(seq "$N"); do
	[ "$(crun run --no-pivot --bundle "$W/b-many" "many-$i" 2>>"$W/many.err" </dev/null)" = EACCES ] &&
		denied=$((denied + 1))
done
echo "INFO $T/many: $N crun containers, each attached and detached by the hook, in $(($(date +%s) - t0)) s" >>"$LOG"
check many/each-denied "$denied" "$N"
check many/maps-as-before "$(maps)" "$before"
check many/nothing-attached "$(nothing_attached)" 0

# --- podman, through hooks.d ---------------------------------------------------------------
# podman, conmon and crun are the same programs whatever the kernel, and what the kernel does
# for a container is checked above with runc and crun on every kernel. So `make test` runs
# podman (a minute under TCG) on Debian 13's kernel only; SBX_PODMAN_KERNELS='*' for all.
podman_here() {
	# shellcheck disable=SC2254	# a pattern on purpose
	case "${SBX_KERNEL_RELEASE:-$(uname -r)}" in ${SBX_PODMAN_KERNELS:-6.12.*}) return 0 ;; esac
	return 1
}
if ! podman_here; then
	echo "INFO $T/podman: not run on this kernel (SBX_PODMAN_KERNELS='${SBX_PODMAN_KERNELS:-6.12.*}')" >>"$LOG"
elif command -v podman >/dev/null; then
	podman_setup "$W" "$ROOT" localhost/sbx-e2e || fail podman/import "$(tail -3 "$W/import.err")"
	prun() {
		$P run --rm --network none --security-opt apparmor=unconfined -w /work \
			--annotation run.oci.hooks.stderr="$W/hook-podman.err" "$@" 2>"$W/podman1.err"
		cat "$W/podman1.err" >>"$W/podman.err"
		[ -s "$W/podman1.err" ] && sed "s/^/INFO $T\/podman: /" "$W/podman1.err" | head -5 >>"$LOG"
		return 0
	}
	check podman/read-denied "$(prun --name sbx-pod-r --annotation io.sbx-bpf.policy=agent-default \
		localhost/sbx-e2e sbx-probe open /root/.ssh/id_rsa)" EACCES
	wait_event podman/read-event "$EV" 'any(.[]; .type == "violation" and .op == "read" and
		.path == "/root/.ssh/id_rsa" and .errno == 13 and .labels["container.name"] == "sbx-pod-r" and
		(.labels["container.id"] | length) == 64)'
	check podman/without-annotation "$(prun localhost/sbx-e2e sbx-probe open /root/.ssh/id_rsa)" OK
	check podman/write-denied "$(prun --name sbx-pod-w --annotation io.sbx-bpf.policy=agent-default \
		localhost/sbx-e2e sbx-probe open /root/new creat)" EACCES
	wait_event podman/write-event "$EV" 'any(.[]; .type == "violation" and .op == "create" and
		.path == "/root/new" and .errno == 13 and .labels["container.name"] == "sbx-pod-w")'
	check podman/connect-denied "$(prun --name sbx-pod-c --annotation io.sbx-bpf.policy=agent-default \
		localhost/sbx-e2e sbx-probe connect 10.1.2.3 80)" EACCES
	wait_event podman/connect-event "$EV" 'any(.[]; .type == "violation" and .op == "connect" and
		.errno == 13 and .labels["container.name"] == "sbx-pod-c")'
	check podman/pids-limit "$(prun --name sbx-pod-p --annotation io.sbx-bpf.policy="$W/limited.json" \
		localhost/sbx-e2e sbx-probe forks 40)" EAGAIN
	wait_event podman/pids-event "$EV" 'any(.[]; .type == "lifecycle" and .event == "pids_max" and
		.labels["container.name"] == "sbx-pod-p")'

	# podman on crun shows the hook's exit code; its stderr goes to run.oci.hooks.stderr's file.
	: >"$W/hook-podman.err"
	out=$(prun --annotation io.sbx-bpf.policy=no-such-preset localhost/sbx-e2e echo RAN)
	case $out in *RAN*) fail podman/bad-annotation-refused "the container ran" ;;
	*) check podman/bad-annotation-refused "$(grep -c 'error executing hook' "$W/podman1.err")" 1 ;; esac
	check podman/bad-annotation-message "$(grep -c "unknown preset 'no-such-preset'" "$W/hook-podman.err")" 1
	i=0	# podman's cleanup (and its poststop) may come after `run` returned
	while [ "$(nothing_attached)" != 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check podman/cleaned-up "$(nothing_attached)" 0
	umount /var/lib/containers
else
	fail podman/installed "no podman in the VM"
fi

kill "$D"
wait "$D" 2>/dev/null
