#!/bin/sh
# `make demo`: an "agent" runs a shell script inside a sandbox that denies
# reading credentials. Runs as init's child in the VM; output goes to the
# console and back to the host.
export PATH=/sbx/bin:$PATH
say() { printf '\n\033[1m## %s\033[0m\n' "$*"; }

# A user's home with credentials, and a workspace for the agent.
mkdir -p /root/.ssh /root/.aws /work/agent
echo "-----BEGIN OPENSSH PRIVATE KEY----- (demo key)" >/root/.ssh/id_rsa
printf '[default]\naws_secret_access_key = demo\n' >/root/.aws/credentials
cd /work/agent

say "Kernel $(uname -r); can sbx-bpf enforce here?"
sbx-bpf doctor

cat >/work/agent/agent.sh <<'AGENT'
echo "agent: listing my workspace";      ls /work/agent
echo "agent: reading ~/.ssh/id_rsa";     cat /root/.ssh/id_rsa
echo "agent: trying a symlink to it";    ln -sf /root/.ssh/id_rsa key; cat key
echo "agent: reading ~/.aws/credentials"; cat /root/.aws/credentials
echo "agent: reading /etc/hostname";     cat /etc/hostname
AGENT

say "sbx-bpf run --deny-read ~/.ssh --deny-read ~/.aws -- sh agent.sh"
sbx-bpf run --name demo-agent --deny-read /root/.ssh --deny-read /root/.aws \
	--events /tmp/events.jsonl -- sh /work/agent/agent.sh
echo "(agent exited with status $?)"

say "The same violations as JSON lines (--events FILE)"
cat /tmp/events.jsonl

say "Outside the sandbox nothing changed:"
cat /root/.ssh/id_rsa
