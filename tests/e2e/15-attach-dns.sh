# Domain rules on an attached cgroup: the daemon runs the cgroup's resolver
# (started by `attach`, its ports in the sandbox entry); refused names are
# events of the daemon's naming the cgroup; a daemon killed with -9 leaves
# DNS failing, not open (the steering stays pinned, aimed at a dead port);
# a restarted daemon adopts the cgroup with a new resolver; a re-attach
# restarts it with the new rules, or stops it; detach stops it; a child
# cgroup with domain rules of its own asks through its parent's resolver,
# so a name the parent refuses never leaves; and an attach with domain
# rules while no daemon runs changes nothing.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh
cd "$W"

PIN=/sys/fs/bpf/sbx
CG=/sys/fs/cgroup/e2e-attach-dns
mkdir -p "$CG" www
echo hello >www/index.html
CGID=$(stat -c %i "$CG")
rec=/run/sbx-bpf/sandboxes/$CGID.json
# inside CMD…: run CMD in the attached cgroup.
inside() { sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec "$@"' sh "$@"; }
# code URL: the HTTP status curl gets inside the cgroup (000: no name, or no connection).
code() { inside curl -s -o /dev/null -m 10 -w '%{http_code}' "$1" 2>/dev/null; }
# The daemon's resolvers for the cgroup (status), as [{cgroup_id, port4, port6}].
resolvers() { sbx-bpf status --json 2>/dev/null | jq -c "[.daemon.resolvers[]? | select(.cgroup_id == $CGID)]"; }
# wait_resolvers N: up to 10 s for N of them; prints how many there are.
wait_resolvers() {
	i=0
	while [ "$(resolvers | jq length)" != "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	resolvers | jq length
}

# Upstream DNS (TTL 60 s); the configured server does not exist: steering makes that irrelevant.
dnsmasq --no-resolv --no-hosts --listen-address=127.0.0.1 --bind-interfaces --port=53 \
	--pid-file="$W/dnsmasq.pid" --host-record=one.test,127.0.0.2,60 \
	--host-record=two.test,127.0.0.3,60 --host-record=three.test,127.0.0.4,60 \
	--log-queries --log-facility="$W/dnsmasq.log" || fail setup/dnsmasq "dnsmasq did not start"
cp /etc/resolv.conf "$W/resolv.conf.orig" 2>/dev/null
echo "nameserver 10.9.9.9" >/etc/resolv.conf
export SBX_DNS_UPSTREAM=127.0.0.1:53	# for the daemon's resolvers
python3 -m http.server --bind :: --directory "$W/www" 8080 >/dev/null 2>&1 &
HTTP=$!
for i in $(seq 150); do sbx-probe connect 127.0.0.2 8080 >/dev/null 2>&1 && break; sleep 0.2; done

echo '{ "network": { "allowedDomains": [ "one.test" ] } }' >one.json
echo '{ "network": { "allowedDomains": [ "two.test" ] } }' >two.json
echo '{ "network": { "allow": [ "127.0.0.3:8080" ] } }' >nodns.json

sbx-bpf daemon --events "$W/ev1.json" 2>"$W/d1.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d1.err")"

# --- attach: the daemon's resolver serves the cgroup -----------------------------------
sbx-bpf attach "$CG" --policy one.json 2>"$W/a.err"
check attach/exit "$?" 0
check attach/one-resolver "$(resolvers | jq length)" 1
check attach/record-has-rules "$(jq -c '.resolver.domains | map(.name)' "$rec" 2>&1)" '["one.test"]'
[ -e "$PIN/steer/$CGID/net_connect4" ] && pass attach/steering-pinned ||
	fail attach/steering-pinned "$(ls -R "$PIN/steer" 2>&1 | head)"
check attach/before-lookup "$(inside sbx-probe connect 127.0.0.2 8080 2>/dev/null)" EACCES
check dns/allowed "$(code http://one.test:8080/)" 200
check dns/refused "$(code http://two.test:8080/)" 000
check dns/refused-address-closed "$(inside sbx-probe connect 127.0.0.3 8080 2>/dev/null)" EACCES
# Port 53 of any server goes to the resolver (dnsmasq's own port included).
check dns/port53-steered "$(inside sbx-probe connect 127.0.0.1 53 2>/dev/null)" OK
check outside/unchanged "$(sbx-probe connect 127.0.0.3 8080 2>/dev/null)" OK
# The refused name is the daemon's event, naming the cgroup, on all its outputs.
wait_event event/denied-dns "$W/ev1.json" \
	"any(.[]; .op == \"dns\" and .verdict == \"denied\" and .domain == \"two.test\" and .path == \"two.test\"
	 and .sandbox_cgroup_id == $CGID and (.rule.text | test(\"allowedDomains\")))"
grep -q 'denied dns two.test' "$W/d1.err" && pass event/human-line || fail event/human-line "$(tail -5 "$W/d1.err")"
# What the resolver counted is in status: the queries, the refused name, and (a TXT question) a refused type.
# Its answer comes back through a pipe: an attached process may not write a file outside allowWrite.
txt=$(inside python3 -c '
import socket, struct
q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x03one\x04test\x00" + struct.pack(">HH", 16, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5); s.sendto(q, ("10.9.9.9", 53))
print(s.recv(512)[3] & 15)' 2>&1)
check dns/txt-notimp "$txt" 4
out=$(resolvers | jq -r '.[0].counters | [(.queries >= 3), (.refused_names >= 1), .refused_types] | join(" ")')
check status/dns-counters "$out" "true true 1"
sbx-bpf status | grep -q "cgroup $CGID: [0-9]* queries, refused [1-9][0-9]* names, 1 types" &&
	pass status/dns-counters-text || fail status/dns-counters-text "$(sbx-bpf status | grep cgroup)"
wait_event event/refused-type "$W/ev1.json" \
	"any(.[]; .op == \"dns\" and .path == \"one.test\" and .detail == \"TXT\" and .arg == 16)"
out=$(sbx-bpf events --json --backlog 1024 --cgroup "$CGID" | jq -s 'any(.[]; .op == "dns" and .domain == "two.test")')
check event/socket "$out" true
P1=$(resolvers | jq -c '.[0] | [.port4, .port6]')

# --- kill -9: DNS fails closed ---------------------------------------------------------
kill -9 "$D"; wait "$D" 2>/dev/null
check kill9/lookup-fails "$(code http://one.test:8080/)" 000
# Still steered, to the dead port: no server on port 53 is reachable instead.
check kill9/port53-not-open "$(inside sbx-probe connect 127.0.0.1 53 2>/dev/null)" ECONNREFUSED
[ -e "$PIN/steer/$CGID/net_connect4" ] && pass kill9/steering-stays || fail kill9/steering-stays "gone"
# No daemon to ask: a re-attach with domain rules is refused, and the cgroup keeps its policy.
cp "$rec" "$W/rec.before"
sbx-bpf attach "$CG" --policy two.json 2>"$W/dead.err"
check kill9/attach-exit-1 "$?" 1
grep -qF "allowedDomains on an attached cgroup need the daemon's resolver: start 'sbx-bpf daemon'" "$W/dead.err" &&
	pass kill9/attach-message || fail kill9/attach-message "$(cat "$W/dead.err")"
cmp -s "$rec" "$W/rec.before" && pass kill9/record-unchanged || fail kill9/record-unchanged "$(cat "$rec")"

# --- restart: the new daemon adopts the cgroup with a new resolver ---------------------
sbx-bpf daemon --events "$W/ev2.json" 2>"$W/d2.err" &
D=$!
check restart/adopted "$(wait_resolvers 1)" 1
grep -q "started the resolver of cgroup $CGID" "$W/d2.err" && pass restart/said || fail restart/said "$(cat "$W/d2.err")"
P2=$(resolvers | jq -c '.[0] | [.port4, .port6]')
[ -n "$P2" ] && [ "$P2" != "$P1" ] && pass restart/new-ports || fail restart/new-ports "before $P1, after $P2"
check restart/lookup-works "$(code http://one.test:8080/)" 200
check restart/still-refused "$(code http://two.test:8080/)" 000
wait_event restart/event "$W/ev2.json" "any(.[]; .op == \"dns\" and .domain == \"two.test\" and .sandbox_cgroup_id == $CGID)"

# --- re-attach: the resolver restarts with the new rules; the old answers go with it ----
sbx-bpf attach "$CG" --policy two.json 2>"$W/re.err"
check reattach/exit "$?" 0
check reattach/one-resolver "$(resolvers | jq length)" 1
check reattach/old-answer-gone "$(inside sbx-probe connect 127.0.0.2 8080 2>/dev/null)" EACCES
check reattach/new-allowed "$(code http://two.test:8080/)" 200
check reattach/old-refused "$(code http://one.test:8080/)" 000

# A policy without domain rules needs no resolver: it stops at once, the steering goes.
sbx-bpf attach "$CG" --policy nodns.json 2>"$W/nodns.err"
check nodns/exit "$?" 0
check nodns/resolver-stopped "$(resolvers | jq length)" 0
[ -e "$PIN/steer/$CGID" ] && fail nodns/steering-unpinned "$(ls "$PIN/steer/$CGID")" || pass nodns/steering-unpinned
check nodns/policy "$(inside sbx-probe connect 127.0.0.3 8080 2>/dev/null) $(inside sbx-probe connect 127.0.0.2 8080 2>/dev/null)" \
	"OK EACCES"

# --- detach: the resolver goes ---------------------------------------------------------
sbx-bpf attach "$CG" --policy one.json 2>>"$W/a.err"
check detach/attached "$?/$(resolvers | jq length)" 0/1
sbx-bpf detach "$CG" 2>"$W/detach.err"
check detach/exit "$?" 0
check detach/resolver-gone "$(resolvers | jq length)" 0
[ -e "$PIN/steer/$CGID" ] && fail detach/steering-unpinned "$(ls "$PIN/steer/$CGID")" || pass detach/steering-unpinned
[ -e "$rec" ] && fail detach/record-removed "still there" || pass detach/record-removed
check detach/no-dns-entries "$(sbx-bpf status --json | jq -r '.maps.dns_allow.used')" 0

# --- nested: a child's resolver asks through its parent's -----------------------------
# The parent allows one.test, the child one.test and three.test. The child's tasks' queries go
# to the child's resolver; it must not ask the upstream itself, or three.test (refused by the
# parent) would be looked up past the parent's policy: a channel out. Through the parent's
# resolver, one.test also opens its address for the parent, whose rules judge the connection too.
IN=$CG/inner
mkdir -p "$IN"
INID=$(stat -c %i "$IN")
echo '{ "network": { "allowedDomains": [ "one.test", "three.test" ] } }' >inner.json
ininner() { sh -c 'echo $$ >'"$IN"'/cgroup.procs && exec "$@"' sh "$@"; }
# python3 -c "$LOOKUP" NAME: "RCODE [ADDRESS]" of an A query to some server (port 53: steered).
LOOKUP='import socket, struct, sys
q = struct.pack(">6H", 9, 0x0100, 1, 0, 0, 0) + b"".join(bytes([len(l)]) + l.encode() for l in sys.argv[1].split("."))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(8)
s.sendto(q + b"\0" + struct.pack(">HH", 1, 1), ("10.9.9.9", 53))
a = s.recv(512)
print({0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN"}.get(a[3] & 15, a[3] & 15), ".".join(map(str, a[-4:])) if a[7] else "")'
lookup() { ininner python3 -c "$LOOKUP" "$1" 2>&1 | tail -1; }
asked() { grep -c 'query.* three\.test' "$W/dnsmasq.log"; }
sbx-bpf attach "$CG" --policy one.json 2>>"$W/a.err" && sbx-bpf attach "$IN" --policy inner.json 2>"$W/in.err"
check nested/attach "$?" 0
check nested/two-resolvers \
	"$(sbx-bpf status --json | jq "[.daemon.resolvers[]? | select(.cgroup_id == $CGID or .cgroup_id == $INID)] | length")" 2
n=$(asked)
check nested/parent-refuses "$(lookup three.test)" "NXDOMAIN "
check nested/refused-never-left "$(asked)" "$n"
wait_event nested/parent-event "$W/ev2.json" \
	"any(.[]; .op == \"dns\" and .verdict == \"denied\" and .domain == \"three.test\" and .sandbox_cgroup_id == $CGID)"
check nested/both-allow "$(ininner curl -s -o /dev/null -m 10 -w '%{http_code}' http://one.test:8080/ 2>/dev/null)" 200
out=$(sbx-bpf status --json | jq "[.daemon.resolvers[]? | select(.cgroup_id == $CGID) | .counters.forwarded] | .[0]")
[ "${out:-0}" -ge 1 ] && pass nested/parent-forwarded || fail nested/parent-forwarded "forwarded: $out"

# The child's resolver down (ports 0, what the daemon writes when it cannot start one) and the
# parent's up: the child's port 53 must not go to the parent's resolver, which would answer past
# the child's policy, but be judged by the rules, which refuse it. The daemon stops meanwhile, or
# its next sync would put the ports back.
kill -STOP "$D"
ports=$(sbx-entry ports "$INID" 0 0)
check nested/child-down-not-steered "$(ininner sbx-probe sendto 10.9.9.9 53 2>/dev/null)" EACCES
sbx-entry ports "$INID" $ports >/dev/null
kill -CONT "$D"
wait_event nested/child-down-event "$W/ev2.json" \
	"any(.[]; .op == \"sendto\" and .net.address == \"10.9.9.9\" and .net.port == 53 and .errno == 13
	 and .verdict == \"denied\" and (.sandbox_cgroup_id == $CGID or .sandbox_cgroup_id == $INID))"

# A run's resolver (in the run, not the daemon) does the same when its sandbox lies below the
# parent: a delegated SBX_CGROUP_ROOT that is itself attached (memory: for the run's oom group).
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
n=$(asked)
SBX_CGROUP_ROOT=$CG sbx-bpf run --name e2e-nested-run --allow-domain one.test --allow-domain three.test -- \
	sh -c 'python3 -c "$1" three.test; curl -s -o /dev/null -m 10 -w "%{http_code}\n" http://one.test:8080/' \
	sh "$LOOKUP" >"$W/nr.out" 2>"$W/nr.err"
check nested-run/exit "$?" 0
check nested-run/dns "$(tr '\n' ' ' <"$W/nr.out")" "NXDOMAIN  200 "
check nested-run/refused-never-left "$(asked)" "$n"
# The run enabled memory below the parent: off again, or no process can join the parent.
echo -memory >"$CG/cgroup.subtree_control"
# The child alone (parent detached): its own rules, and its resolver asks the upstream.
sbx-bpf detach "$CG" 2>>"$W/detach.err"
check nested/child-alone "$(lookup three.test)" "NOERROR 127.0.0.4"
sbx-bpf detach "$IN" 2>>"$W/detach.err"
rmdir "$IN" 2>/dev/null

# --- no daemon at all: an attach with domain rules changes nothing --------------------
kill "$D"; wait "$D" 2>/dev/null
sbx-bpf attach "$CG" --policy one.json 2>"$W/none.err"
check no-daemon/exit-1 "$?" 1
grep -qF "allowedDomains on an attached cgroup need the daemon's resolver: start 'sbx-bpf daemon'" "$W/none.err" &&
	pass no-daemon/message || fail no-daemon/message "$(cat "$W/none.err")"
check no-daemon/not-attached "$(sbx-bpf list --json | jq "[.[] | select(.cgroup_id == $CGID)] | length")" 0
[ -e "$rec" ] && fail no-daemon/no-record "$(cat "$rec")" || pass no-daemon/no-record
check no-daemon/cgroup-unconfined "$(inside sbx-probe connect 127.0.0.3 8080 2>/dev/null)" OK

kill "$HTTP" "$(cat "$W/dnsmasq.pid")" 2>/dev/null
cp "$W/resolv.conf.orig" /etc/resolv.conf 2>/dev/null
rmdir "$CG" 2>/dev/null
