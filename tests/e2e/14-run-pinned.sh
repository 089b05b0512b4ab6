# `run` on the daemon's pinned programs: starting a sandbox loads no BPF
# program, policies of concurrent runs stay apart (policy ids from the
# shared counter), each run's resolver gets its sandbox's DNS (ports in the
# sandbox entry), events come back through the daemon's socket, and a run
# that ends leaves nothing in the shared maps.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh
cd "$W"

mkdir -p data
echo a >data/a
echo b >data/b

dnsmasq --no-resolv --no-hosts --listen-address=127.0.0.1 --bind-interfaces --port=53 \
	--pid-file="$W/dnsmasq.pid" --host-record=one.test,127.0.0.2,60 \
	--host-record=two.test,127.0.0.3,60 || fail setup/dnsmasq "dnsmasq did not start"
cp /etc/resolv.conf "$W/resolv.conf.orig" 2>/dev/null
echo "nameserver 10.9.9.9" >/etc/resolv.conf
export SBX_DNS_UPSTREAM=127.0.0.1:53
python3 -m http.server --bind :: --directory "$W/data" 8080 >/dev/null 2>&1 &
HTTP=$!
for i in $(seq 150); do sbx-probe connect 127.0.0.2 8080 >/dev/null 2>&1 && break; sleep 0.2; done

sbx-bpf daemon --events "$W/daemon.json" 2>"$W/d.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d.err")"
progs=$(sbx-probe bpf-progs)
# The daemon steers the DNS of every sandbox below sbx-bpf/ once, on that cgroup.
ROOTSTEER=/sys/fs/bpf/sbx/rootsteer/$(stat -c %i /sys/fs/cgroup/sbx-bpf)
[ -e "$ROOTSTEER/net_connect4" ] && [ -e "$ROOTSTEER/net_getpeername6" ] && pass daemon/root-steering ||
	fail daemon/root-steering "$(ls -R /sys/fs/bpf/sbx/rootsteer 2>&1 | head; tail -3 "$W/d.err")"

# One run: enforced, no program loaded, events through the daemon.
sbx-bpf run --name pin-a --deny-read "$W/data/a" --events "$W/a.json" -- \
	sh -c "sleep 2; sbx-probe open $W/data/a; sbx-probe open $W/data/b" >"$W/a.out" 2>"$W/a.err" &
A=$!
sleep 1
check no-load/programs "$(sbx-probe bpf-progs)" "$progs"
check list/shows-run "$(sbx-bpf list --json | jq -r '[.[] | .cgroup | endswith("/pin-a")] | any')" true
wait "$A"
check run/exit "$?" 0
check run/enforced "$(tr '\n' ' ' <"$W/a.out")" "EACCES OK "
grep -q "^sbx-bpf: denied read $W/data/a (denyRead $W/data/a)" "$W/a.err" && pass run/human-event ||
	fail run/human-event "$(cat "$W/a.err")"
check_json run/json-event "$W/a.json" \
	"any(.[]; .op == \"read\" and .path == \"$W/data/a\" and .verdict == \"denied\" and .sandbox == \"pin-a\"
	 and .rule.text == \"denyRead $W/data/a\" and (.kernel_seq | type) == \"number\")"
check_json daemon/named-rule "$W/daemon.json" \
	"any(.[]; .path == \"$W/data/a\" and .rule.text == \"denyRead $W/data/a\")"
check gone/list "$(sbx-bpf list --json | jq -r 'length')" 0
check gone/sandboxes "$(sbx-bpf status --json | jq -r '.maps.sandboxes.used')" 0

# Two at once, each with its own policy and its own resolver.
sbx-bpf run --name pin-b --deny-read "$W/data/b" --allow-domain one.test -- sh -c "sleep 2;
	sbx-probe open $W/data/a; sbx-probe open $W/data/b;
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://one.test:8080/a;
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://two.test:8080/a" >"$W/b.out" 2>"$W/b.err" &
B=$!
sbx-bpf run --name pin-c --deny-read "$W/data/a" --allow-domain two.test -- sh -c "sleep 2;
	sbx-probe open $W/data/a; sbx-probe open $W/data/b;
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://two.test:8080/a;
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://one.test:8080/a" >"$W/c.out" 2>"$W/c.err" &
C=$!
sleep 1
check two/programs "$(sbx-probe bpf-progs)" "$progs"
# Under the daemon's steering, a run pins none of its own.
check two/no-own-steering "$(ls /sys/fs/bpf/sbx/steer 2>/dev/null | wc -l)" 0
wait "$B"; wait "$C"
# curl prints 000 when it cannot resolve or connect.
# A failure says what each run printed (its denials) and what the daemon saw.
why() { printf '%s | stderr: %s | daemon: %s' "$(tr '\n' ' ' <"$1")" "$(tr '\n' ' ' <"$2" | tail -c 600)" \
	"$(tail -5 "$W/d.err" | tr '\n' ' ')"; }
[ "$(tr '\n' ' ' <"$W/b.out")" = "OK EACCES 200 000 " ] && pass two/b-policy-and-dns ||
	fail two/b-policy-and-dns "want 'OK EACCES 200 000', got $(why "$W/b.out" "$W/b.err")"
[ "$(tr '\n' ' ' <"$W/c.out")" = "EACCES OK 200 000 " ] && pass two/c-policy-and-dns ||
	fail two/c-policy-and-dns "want 'EACCES OK 200 000', got $(why "$W/c.out" "$W/c.err")"
grep -q "denied dns two.test" "$W/b.err" && pass two/b-dns-event || fail two/b-dns-event "$(cat "$W/b.err")"
check gone/dns-allow "$(sbx-bpf status --json | jq -r '.maps.dns_allow.used')" 0
check gone/records "$(ls /run/sbx-bpf/sandboxes | grep -c '^[0-9]*\.json$')" 0

check gone/steer-pins "$(ls /sys/fs/bpf/sbx/steer 2>/dev/null | wc -l)" 0

# A run's resolver is the run's own, yet its counters are in the daemon's status (owner "run").
sbx-bpf run --name pin-d --allow-domain one.test -- sh -c "curl -s -m 10 -o /dev/null http://one.test:8080/a;
	curl -s -m 10 -o /dev/null http://two.test:8080/a; sleep 4" >/dev/null 2>&1 &
DR=$!
i=0
while [ $i -lt 60 ]; do
	got=$(sbx-bpf status --json | jq -r '[.daemon.resolvers[]? | select(.owner == "run") | .counters |
		(.queries >= 2 and .forwarded >= 1 and .refused_names >= 1 and .allowed_names == 1)] | any')
	[ "$got" = true ] && break
	sleep 0.2
	i=$((i + 1))
done
check run-dns/status-json "$got" true
sbx-bpf status | grep -q "cgroup [0-9]* (run): [0-9]* queries, refused [1-9][0-9]* names" &&
	pass run-dns/status-text || fail run-dns/status-text "$(sbx-bpf status | grep cgroup)"
wait "$DR"
check run-dns/counts-gone "$(ls /run/sbx-bpf/dns 2>/dev/null | wc -l)" 0

# A run waits for the daemon's last records only if its sandbox counted something
# (loader__sandbox_quiet). The last act before exit is the violation: its record still
# comes back, denied or audited; a clean run gets none.
# The kernel's "denied" counter (status .counters.denied) counts what was refused: an audit
# hit is a violation but no refusal.
denied() { sbx-bpf status --json | jq -r '.counters.denied'; }
den0=$(denied)
out=$(sbx-bpf run --deny-read "$W/data/a" --events "$W/last.json" -- sbx-probe open "$W/data/a" 2>"$W/last.err")
check last/enforced "$out" EACCES
den1=$(denied)
check last/denied-counted "$([ "$den1" -gt "$den0" ] && echo yes || echo "no: $den0 -> $den1")" yes
check_json last/json-event "$W/last.json" "any(.[]; .op == \"read\" and .path == \"$W/data/a\" and .verdict == \"denied\")"
grep -q "^sbx-bpf: denied read $W/data/a" "$W/last.err" && pass last/human-event || fail last/human-event "$(cat "$W/last.err")"
out=$(sbx-bpf run --audit --deny-read "$W/data/a" --events "$W/audit.json" -- sbx-probe open "$W/data/a" 2>/dev/null)
check last/audit-allowed "$out" OK
check last/audit-not-denied "$(($(denied) - den1))" 0
check_json last/audit-event "$W/audit.json" "any(.[]; .path == \"$W/data/a\" and .verdict == \"audit\")"
out=$(sbx-bpf run --deny-read "$W/data/a" --events "$W/clean.json" -- sbx-probe open "$W/data/b" 2>"$W/clean.err")
check clean/allowed "$out" OK
check clean/no-events "$(wc -c <"$W/clean.json")" 0

# A run without a resolver skips the purge of dns_allow at its end, unless a grant was
# recorded: a connect grant's slot made while it ran must still go with it.
sbx-bpf run --name pin-g --deny-read "$W/data/a" -- sleep 8 >/dev/null 2>"$W/g.err" &
G=$!
i=0
while [ ! -d /sys/fs/cgroup/sbx-bpf/pin-g ] || ! sbx-bpf list --json | jq -e 'any(.[]; .cgroup | endswith("/pin-g"))' >/dev/null; do
	[ $i -lt 100 ] || break
	sleep 0.1; i=$((i + 1))
done
sbx-bpf grant /sys/fs/cgroup/sbx-bpf/pin-g --connect 127.0.0.2:8081 --ttl 60s >"$W/grant.out" 2>&1
check granted/exit "$?" 0
check granted/dns-slot "$(sbx-bpf status --json | jq -r '.maps.dns_allow.used')" 1
wait "$G"
check granted/gone-dns-allow "$(sbx-bpf status --json | jq -r '.maps.dns_allow.used')" 0
check granted/gone-records "$(ls /run/sbx-bpf/sandboxes | grep -c '^[0-9]*\.json$')" 0

# A run killed with -9 while its cgroup lives on: the sandbox stays, and port 53 must not slip
# past the rules (its steering is pinned: queries go to the dead resolver and are refused).
sbx-bpf run --name pin-k --deny-read "$W/data/a" --allow-domain one.test -- sleep 60 >/dev/null 2>&1 &
K=$!
sleep 2
# Steered by the daemon's set on sbx-bpf/, not by one of its own: that set must fail closed too.
check killed-run/parent-steering "$(ls /sys/fs/bpf/sbx/steer 2>/dev/null | wc -l)" 0
kill -9 "$K"; wait "$K" 2>/dev/null
KCG=/sys/fs/cgroup/sbx-bpf/pin-k
out=$(sh -c 'echo $$ >'"$KCG"'/cgroup.procs && exec sbx-probe connect 127.0.0.1 53 tcp' 2>/dev/null)
check killed-run/port53-refused "$out" ECONNREFUSED
out=$(sh -c 'echo $$ >'"$KCG"'/cgroup.procs && exec sbx-probe open '"$W/data/a" 2>/dev/null)
check killed-run/still-sandboxed "$out" EACCES
echo 1 >"$KCG/cgroup.kill"
sbx-bpf detach "$KCG" 2>"$W/kd.err"
check killed-run/detach "$?" 0
check killed-run/pins-gone "$(ls /sys/fs/bpf/sbx/steer 2>/dev/null | wc -l)" 0
rmdir "$KCG" 2>/dev/null

# Without the daemon's steering (its pins removed: the links go), a run steers its own DNS
# again: its set is pinned while it runs (so a kill -9 still fails closed) and goes with it.
rm -r /sys/fs/bpf/sbx/rootsteer
sbx-bpf run --name pin-s --allow-domain one.test -- sh -c "sleep 2;
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://one.test:8080/a;
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://two.test:8080/a" >"$W/s.out" 2>"$W/s.err" &
S=$!
i=0
while [ ! -d /sys/fs/cgroup/sbx-bpf/pin-s ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
SCG=$(stat -c %i /sys/fs/cgroup/sbx-bpf/pin-s 2>/dev/null)
[ -n "$SCG" ] && [ -e "/sys/fs/bpf/sbx/steer/$SCG/net_connect4" ] && pass own-steer/pinned ||
	fail own-steer/pinned "cgroup ${SCG:-missing}: $(ls -R /sys/fs/bpf/sbx/steer 2>&1 | head)"
wait "$S"
[ "$(tr '\n' ' ' <"$W/s.out")" = "200 000 " ] && pass own-steer/dns ||
	fail own-steer/dns "want '200 000', got $(why "$W/s.out" "$W/s.err")"
check own-steer/unpinned "$(ls /sys/fs/bpf/sbx/steer 2>/dev/null | wc -l)" 0

# No daemon, programs still pinned: the run enforces and says where its events wait.
kill "$D"; wait "$D" 2>/dev/null
out=$(sbx-bpf run --deny-read "$W/data/a" -- sbx-probe open "$W/data/a" 2>"$W/nod.err")
check no-daemon/enforced "$out" EACCES
grep -q "no sbx-bpf daemon answers" "$W/nod.err" && pass no-daemon/said || fail no-daemon/said "$(cat "$W/nod.err")"

kill "$HTTP" "$(cat "$W/dnsmasq.pid")" 2>/dev/null
cp "$W/resolv.conf.orig" /etc/resolv.conf 2>/dev/null
