#!/bin/sh
# `make demo-containers`: podman runs a container under a policy through
# sbx-bpf's OCI hook (hooks.d), with no orchestrator in between. Runs as
# init's child in the VM; output goes to the console and back to the host.
export PATH=/sbx/bin:$PATH
say() { printf '\n\033[1m## %s\033[0m\n' "$*"; }
. /sbx/tests/vm/containers.sh

# The demo proves something only if the container was attached and denied:
# every step that could not is a DEMO-FAIL line, and the make target fails on any.
failed=0
demo_fail() { echo "DEMO-FAIL: $*"; failed=1; }
W=$(mktemp -d /tmp/demo.XXXXXX)

say "Kernel $(uname -r); the host agent collects every event"
sbx-bpf daemon --events "$W/events.jsonl" 2>"$W/daemon.err" &
D=$!
i=0
while [ ! -S /run/sbx-bpf/events.sock ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
[ -S /run/sbx-bpf/events.sock ] || demo_fail "the daemon did not start: $(tail -3 "$W/daemon.err")"

say "An image with a private key in /root/.ssh, and sbx-bpf's hooks.d"
container_rootfs "$W/rootfs"
podman_setup "$W" "$W/rootfs" localhost/demo || demo_fail "podman import: $(tail -3 "$W/import.err")"
cat "$W/hooks.d/sbx-bpf-create.json"

run_demo() {
	$P run --rm --network none --security-opt apparmor=unconfined -w /work "$@"
}
say "podman run --name demo-agent --annotation io.sbx-bpf.policy=agent-default localhost/demo cat /root/.ssh/id_rsa"
run_demo --name demo-agent --annotation io.sbx-bpf.policy=agent-default localhost/demo cat /root/.ssh/id_rsa
rc=$?
echo "(container exited with status $rc)"
[ $rc -ne 0 ] || demo_fail "the container read the key"

say "The same container without the annotation: not sbx-bpf's business"
run_demo localhost/demo cat /root/.ssh/id_rsa || demo_fail "the container without the annotation could not read its own file"

say "A policy that does not exist: the container does not start"
run_demo --annotation io.sbx-bpf.policy=no-such-preset localhost/demo echo "this must not print" &&
	demo_fail "a container with a bad policy started"

i=0
while ! jq -se 'any(.[]; .type == "violation" and .labels["container.name"] == "demo-agent")' \
	"$W/events.jsonl" >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
say "The daemon's event: the container's name and id on the denial"
jq -c 'select(.type == "violation") | {op, path, errno, rule: .rule.text, comm: .process.comm, labels}' \
	"$W/events.jsonl"
jq -se 'any(.[]; .type == "violation" and .op == "read" and .path == "/root/.ssh/id_rsa" and .errno == 13 and
	.labels["container.name"] == "demo-agent" and (.labels["container.id"] | length) == 64)' \
	"$W/events.jsonl" >/dev/null 2>&1 || demo_fail "no denial event naming the container demo-agent"
say "After the container: nothing attached"
sbx-bpf list
[ "$(sbx-bpf list --json | jq length)" = 0 ] || demo_fail "a container stayed attached"
kill "$D"
wait "$D" 2>/dev/null
if [ $failed -eq 0 ]; then
	echo "DEMO-OK: podman container demo-agent attached by the OCI hook on $(uname -r); its denial names it"
fi
