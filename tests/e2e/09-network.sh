# Network enforcement with real components: dnsmasq as the upstream DNS
# server, python3's http.server, curl, and sbx-probe for exact errnos.
# Every denial is checked twice: the errno the program got, and the event.
. /sbx/tests/e2e/lib.sh
cd "$W"

mkdir -p www sock
echo hello >www/index.html

# Upstream DNS: test zones pointing at loopback aliases (TTL last).
dnsmasq --no-resolv --no-hosts --listen-address=127.0.0.1 --bind-interfaces --port=53 \
	--pid-file="$W/dnsmasq.pid" --log-queries --log-facility="$W/dnsmasq.log" \
	--host-record=allowed.test,127.0.0.2,60 --host-record=api.allowed.test,127.0.0.3,60 \
	--host-record=bad.allowed.test,127.0.0.4,60 --host-record=blocked.test,127.0.0.5,60 \
	--host-record=short.allowed.test,127.0.0.6,2 --host-record=ported.allowed.test,127.0.0.7,60 \
	--host-record=wild.test,127.0.0.8,60 --host-record=x.wild.test,127.0.0.9,60 \
	--host-record=six.allowed.test,::1,60 ||
	fail setup/dnsmasq "dnsmasq did not start"
# The sandbox's configured server does not even exist: steering makes that irrelevant.
cp /etc/resolv.conf "$W/resolv.conf.orig" 2>/dev/null
echo "nameserver 10.9.9.9" >/etc/resolv.conf
export SBX_DNS_UPSTREAM=127.0.0.1:53

# HTTP on [::]:8080 (dual stack: every 127.x address and ::1) and 127.0.0.2:8081.
python3 -m http.server --bind :: --directory "$W/www" 8080 >/dev/null 2>&1 &
HTTP1=$!
python3 -m http.server --bind 127.0.0.2 --directory "$W/www" 8081 >/dev/null 2>&1 &
HTTP2=$!
# Unix sockets outside the sandbox: allowed, other, abstract, datagram.
userv() {
	python3 -c "
import socket, sys, time
kind = socket.SOCK_DGRAM if sys.argv[2] == 'dgram' else socket.SOCK_STREAM
s = socket.socket(socket.AF_UNIX, kind)
s.bind(sys.argv[1].replace('@', '\0', 1) if sys.argv[1][0] == '@' else sys.argv[1])
if kind == socket.SOCK_STREAM: s.listen(64)
time.sleep(600)" "$1" "$2" &
	echo $! >>"$W/servers"
}
userv "$W/sock/allowed.sock" stream
userv "$W/sock/other.sock" stream
userv "@sbx-e2e-abstract" stream
userv "$W/sock/dgram.sock" dgram
ln -s "$W/sock/allowed.sock" "$W/link.sock"
wait_for "$W/sock/dgram.sock" 100
# SCTP's module is loaded from outside first: inside a sandbox the kernel
# may not load modules for it (task.bpf.c), and this test is about the socket hooks.
sbx-probe socket sctp >/dev/null 2>&1
# Both servers start on their own clocks (python3 takes seconds under TCG):
# wait for each one, not just the first.
for i in $(seq 150); do sbx-probe connect 127.0.0.2 8081 >/dev/null 2>&1 && break; sleep 0.2; done
for i in $(seq 150); do sbx-probe connect ::1 8080 >/dev/null 2>&1 && break; sleep 0.2; done
sbx-probe connect ::1 8080 >/dev/null 2>&1 || fail setup/http "no HTTP server on [::1]:8080"

# probe NAME ARGS…: one line "NAME RESULT" into $OUT (run inside the sandbox).
cat >"$W/probe.sh" <<'EOF'
probe() { n=$1; shift; echo "$n $(sbx-probe "$@" 2>/dev/null)" >>"$OUT"; }
EOF
# result NAME FILE: the result recorded for NAME.
result() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }

# --- addresses, ports, protocols --------------------------------------------------
cat >"$W/cidr.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W", "/dev/null" ] },
  "network": {
    "allow": [ "127.0.0.2:8080", "127.0.0.3/32:9000-9100", "[::1]:8080", "127.0.0.0/8:7000" ],
    "deny": [ "127.0.0.3:9050" ],
    "allowUnixSockets": [ "$W/sock/allowed.sock" ]
} }
EOF
cat >"$W/cidr.sh" <<'EOF'
. "$W/probe.sh"
probe tcp-allowed connect 127.0.0.2 8080
probe tcp-other-port connect 127.0.0.2 8081
probe tcp-other-addr connect 127.0.0.10 8080
probe udp-sendto-allowed sendto 127.0.0.2 8080
probe udp-sendto-denied sendto 127.0.0.2 8082
probe udp-connected-allowed udp-send 127.0.0.2 8080
probe udp-connected-denied udp-send 127.0.0.11 8080
probe range-allowed sendto 127.0.0.3 9001
probe range-deny-wins sendto 127.0.0.3 9050
probe prefix-port sendto 127.0.0.12 7000
probe ipv6-allowed connect ::1 8080
probe ipv6-denied connect ::1 8081
probe v4mapped-allowed connect ::ffff:127.0.0.2 8080
probe v4mapped-denied connect ::ffff:127.0.0.13 8080
probe tfo-allowed tfo 127.0.0.2 8080
probe tfo-denied tfo 127.0.0.14 8080
probe bind-port-denied bind 127.0.0.1 9999
probe bind-ephemeral-ok bind 127.0.0.1 0 udp
probe listen-denied listen 127.0.0.1 0
probe raw-denied socket raw
probe packet-denied socket packet
probe vsock-denied socket vsock
probe unix-allowed unix-connect "$W/sock/allowed.sock"
probe unix-symlink-allowed unix-connect "$W/link.sock"
probe unix-other-denied unix-connect "$W/sock/other.sock"
probe unix-abstract-denied unix-connect @sbx-e2e-abstract
probe unix-dgram-denied unix-connect "$W/sock/dgram.sock" dgram
probe abstract-bind-denied unix-bind @sbx-e2e-mine
probe unspec-sendto-denied sendto-unspec 127.0.0.2 8082
probe unspec-sendto-allowed sendto-unspec 127.0.0.2 8080
probe unspec-bind-denied bind-unspec 9998
probe sctp-denied socket sctp
probe seqpacket-denied socket seqpacket
EOF
OUT=$W/cidr.out W=$W sbx-bpf run --name e2e-net --policy "$W/cidr.json" --events "$W/ev-cidr.json" \
	-- sh "$W/cidr.sh" 2>"$W/err-cidr"
for want in tcp-allowed:OK tcp-other-port:EACCES tcp-other-addr:EACCES udp-sendto-allowed:OK \
	udp-sendto-denied:EACCES udp-connected-allowed:OK udp-connected-denied:EACCES range-allowed:OK \
	range-deny-wins:EACCES prefix-port:OK ipv6-allowed:OK ipv6-denied:EACCES v4mapped-allowed:OK \
	v4mapped-denied:EACCES tfo-allowed:OK tfo-denied:EACCES bind-port-denied:EACCES \
	bind-ephemeral-ok:OK listen-denied:EACCES raw-denied:EACCES packet-denied:EACCES \
	vsock-denied:EACCES unix-allowed:OK unix-symlink-allowed:OK unix-other-denied:EACCES \
	unix-abstract-denied:EACCES unix-dgram-denied:EACCES abstract-bind-denied:EACCES \
	unspec-sendto-denied:EACCES unspec-sendto-allowed:OK unspec-bind-denied:EACCES sctp-denied:EACCES \
	seqpacket-denied:EACCES; do
	check "cidr/${want%%:*}" "$(result "${want%%:*}" "$W/cidr.out")" "${want#*:}"
done
E=$W/ev-cidr.json
ev() { check_json "cidr/event-$1" "$E" "$2"; }
ev tcp-other-port 'any(.[]; .op == "connect" and .net.address == "127.0.0.2" and .net.port == 8081 and
	.net.protocol == "tcp" and .net.family == "inet" and .errno == 13 and .verdict == "denied" and
	(.rule.text | test("no network rule")))'
ev udp-sendto 'any(.[]; .op == "sendto" and .net.address == "127.0.0.2" and .net.port == 8082 and .net.protocol == "udp")'
ev udp-connected 'any(.[]; .op == "connect" and .net.address == "127.0.0.11" and .net.protocol == "udp")'
ev deny-rule 'any(.[]; .net.port == 9050 and .rule.text == "deny 127.0.0.3:9050" and (.rule.id | type) == "number")'
ev ipv6 'any(.[]; .net.family == "inet6" and .net.address == "::1" and .net.port == 8081)'
ev v4mapped 'any(.[]; .net.family == "inet6" and .net.address == "127.0.0.13")'
ev tfo 'any(.[]; .op == "sendto" and .net.protocol == "tcp" and .net.address == "127.0.0.14")'
ev bind 'any(.[]; .op == "bind" and .net.port == 9999 and (.rule.text | test("allowLocalBinding")))'
ev listen 'any(.[]; .op == "listen" and .net.family == "inet")'
ev raw 'any(.[]; .op == "socket" and .net.protocol == "icmp")'
ev packet 'any(.[]; .op == "socket" and .net.family == "packet")'
ev sctp 'any(.[]; .op == "socket" and .net.protocol_number == 132)'
ev unspec 'any(.[]; .op == "sendto" and .net.address == "127.0.0.2" and .net.port == 8082 and .net.family == "inet")'
ev unix-other "any(.[]; .op == \"connect\" and .net.family == \"unix\" and .path == \"$W/sock/other.sock\")"
ev unix-abstract 'any(.[]; .net.abstract and .path == "sbx-e2e-abstract" and (.rule.text | test("abstract")))'
ev unix-dgram "any(.[]; .op == \"sendto\" and .path == \"$W/sock/dgram.sock\")"
ev no-event-for-allowed "map(select(.net.port == 8080 and .net.address == \"127.0.0.2\")) | length == 0"
ev every-denial-has-event "length == $(grep -c ' EACCES$' "$W/cidr.out")"
grep -q 'denied connect 127.0.0.2:8081/tcp' "$W/err-cidr" && pass cidr/human-line ||
	fail cidr/human-line "$(head -c 300 "$W/err-cidr")"

# 0.0.0.0 and :: reach this host's loopback: judged as 127.0.0.1 and ::1.
echo '{ "network": { "allow": [ "0.0.0.0/0", "::/0" ], "deny": [ "127.0.0.0/8", "::1" ] } }' >"$W/any.json"
out=$(sbx-bpf run --policy "$W/any.json" -- sh -c 'sbx-probe connect 0.0.0.0 8080; sbx-probe connect :: 8080;
	sbx-probe connect ::ffff:0.0.0.0 8080; sbx-probe sendto-unspec 127.0.0.2 8080' 2>/dev/null | tr '\n' ' ')
check cidr/unspecified-is-loopback "$out" "EACCES EACCES EACCES EACCES "
check outside/sctp "$(sbx-probe socket sctp 2>/dev/null)" OK

# Audit mode: the same policy lets everything through and reports it.
echo '{ "mode": "audit", "network": { "allow": [] } }' >"$W/audit.json"
out=$(sbx-bpf run --policy "$W/audit.json" --events "$W/ev-audit.json" -- sbx-probe connect 127.0.0.2 8080 2>/dev/null)
check audit/allows "$out" OK
check_json audit/event "$W/ev-audit.json" 'any(.[]; .verdict == "audit" and .net.port == 8080 and .errno == 0)'

# Outside the sandbox nothing changes while a sandbox is running.
sbx-bpf run --name e2e-net-bg --policy "$W/cidr.json" -- sleep 60 2>/dev/null &
bg=$!
wait_for /sys/fs/cgroup/sbx-bpf/e2e-net-bg 100; sleep 0.5
check outside/tcp "$(sbx-probe connect 127.0.0.2 8081 2>/dev/null)" OK
check outside/raw "$(sbx-probe socket raw 2>/dev/null)" OK
check outside/unix "$(sbx-probe unix-connect "$W/sock/other.sock" 2>/dev/null)" OK
kill "$bg"; wait "$bg" 2>/dev/null

# allowLocalBinding and allowAllUnixSockets switch those checks off.
echo '{ "network": { "allowLocalBinding": true, "allowAllUnixSockets": true, "allowRawSockets": true } }' >"$W/open.json"
out=$(sbx-bpf run --policy "$W/open.json" -- sh -c "sbx-probe listen 127.0.0.1 0; sbx-probe unix-connect @sbx-e2e-abstract;
	sbx-probe unix-connect $W/sock/other.sock; sbx-probe socket raw" 2>/dev/null | tr '\n' ' ')
check switches/allow "$out" "OK OK OK OK "

# --- domains: DNS steered to sbx-bpf's resolver ------------------------------------
cat >"$W/dom.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W", "/dev/null" ] },
  "network": {
    "allowedDomains": [ "allowed.test", "*.allowed.test", "ported.allowed.test:8081", "*.wild.test" ],
    "deniedDomains": [ "bad.allowed.test" ]
} }
EOF
cat >"$W/dom.sh" <<'EOF'
. "$W/probe.sh"
curlr() { c=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "$2" 2>/dev/null); echo "$1 $?/$c" >>"$OUT"; }
probe before-lookup connect 127.0.0.2 8080
curlr allowed http://allowed.test:8080/
probe after-lookup connect 127.0.0.2 8080
curlr wildcard http://api.allowed.test:8080/
curlr blocked http://blocked.test:8080/
probe blocked-ip connect 127.0.0.5 8080
curlr denied-beats-wildcard http://bad.allowed.test:8080/
curlr wildcard-not-apex http://wild.test:8080/
curlr wildcard-sub http://x.wild.test:8080/
curlr port-other http://ported.allowed.test:8080/
curlr ipv6-answer http://six.allowed.test:8080/
ip=$(getent hosts short.allowed.test | awk '{ print $1 }')
probe short-fresh connect "${ip:-none}" 8080
sleep 5
probe short-expired connect "${ip:-none}" 8080
EOF
OUT=$W/dom.out W=$W sbx-bpf run --name e2e-dom --policy "$W/dom.json" --events "$W/ev-dom.json" \
	-- sh "$W/dom.sh" 2>"$W/err-dom"
for want in before-lookup:EACCES allowed:0/200 after-lookup:OK wildcard:0/200 blocked:6/000 \
	blocked-ip:EACCES denied-beats-wildcard:6/000 wildcard-not-apex:6/000 wildcard-sub:0/200 \
	port-other:7/000 ipv6-answer:0/200 short-fresh:OK short-expired:EACCES; do
	check "dns/${want%%:*}" "$(result "${want%%:*}" "$W/dom.out")" "${want#*:}"
done
E=$W/ev-dom.json
dv() { check_json "dns/event-$1" "$E" "$2"; }
dv blocked 'any(.[]; .op == "dns" and .domain == "blocked.test" and .path == "blocked.test" and
	.rule.text == "default: not in allowedDomains" and .process.comm != "")'
dv denied-domain 'any(.[]; .op == "dns" and .domain == "bad.allowed.test" and (.rule.text | test("bad.allowed.test")))'
dv apex 'any(.[]; .op == "dns" and .domain == "wild.test")'
dv raw-ip-no-domain 'any(.[]; .op == "connect" and .net.address == "127.0.0.5" and .domain == null)'
dv before-lookup 'any(.[]; .op == "connect" and .net.address == "127.0.0.2" and .net.port == 8080)'
dv port-other 'any(.[]; .op == "connect" and .net.address == "127.0.0.7" and .net.port == 8080 and
	.domain == "ported.allowed.test")'
dv expired 'any(.[]; .op == "connect" and .net.address == "127.0.0.6" and .domain == "short.allowed.test" and
	(.rule.text | test("expired")))'
dv allowed-silent 'map(select(.domain == "allowed.test" or .domain == "api.allowed.test")) | length == 0'
grep -q 'denied dns blocked.test' "$W/err-dom" && pass dns/human-line || fail dns/human-line "$(head -c 300 "$W/err-dom")"
# Refused names never reach the upstream server.
grep -q 'query\[A\] blocked.test' "$W/dnsmasq.log" && fail dns/not-forwarded "blocked.test reached dnsmasq" ||
	pass dns/not-forwarded
grep -q 'query\[A\] allowed.test' "$W/dnsmasq.log" && pass dns/forwarded || fail dns/forwarded "allowed.test never reached dnsmasq"

# DNS over TCP and to an IPv6 server are steered as well (python builds the query).
cat >"$W/q.py" <<'EOF'
import socket, struct, sys
fam, addr, name = sys.argv[1], sys.argv[2], sys.argv[3]
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET6 if fam == "6" else socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(5)
s.connect((addr, 53))
s.sendall(struct.pack(">H", len(q)) + q)
n = struct.unpack(">H", s.recv(2))[0]
r = b""
while len(r) < n: r += s.recv(n - len(r))
print("rcode=%d answers=%d" % (r[3] & 15, struct.unpack(">H", r[6:8])[0]))
EOF
out=$(sbx-bpf run --policy "$W/dom.json" -- python3 "$W/q.py" 4 10.9.9.9 allowed.test 2>/dev/null)
check dns/tcp-allowed "$out" "rcode=0 answers=1"
out=$(sbx-bpf run --policy "$W/dom.json" -- python3 "$W/q.py" 4 10.9.9.9 blocked.test 2>/dev/null)
check dns/tcp-refused "$out" "rcode=3 answers=0"
# Port 53 is let through only because it is rewritten: TCP Fast Open to a server
# that does not exist reaches the resolver (no route to 10.9.9.9 otherwise).
out=$(sbx-bpf run --policy "$W/dom.json" -- sbx-probe tfo 10.9.9.9 53 2>/dev/null)
check dns/tfo-steered "$out" OK
# One sandbox's answers open nothing for another running the same policy.
sbx-bpf run --name e2e-dns-a --policy "$W/dom.json" -- sh -c \
	"getent hosts allowed.test >/dev/null; sbx-probe connect 127.0.0.2 8080 >$W/iso-a; sleep 30" 2>/dev/null &
iso=$!
wait_for "$W/iso-a" 300; sleep 0.3
check dns/isolation-owner "$(cat "$W/iso-a")" OK
out=$(sbx-bpf run --name e2e-dns-b --policy "$W/dom.json" -- sbx-probe connect 127.0.0.2 8080 2>/dev/null)
check dns/isolation-other "$out" EACCES
kill "$iso"; wait "$iso" 2>/dev/null
# The same from command-line flags instead of a policy file.
out=$(sbx-bpf run --allow-domain allowed.test --allow-write "$W" -- curl -s -m 10 http://allowed.test:8080/ 2>/dev/null)
check flags/allow-domain "$out" hello
out=$(sbx-bpf run --allow-net 127.0.0.2:8081 --allow-write "$W" -- sh -c \
	"sbx-probe connect 127.0.0.2 8081; sbx-probe connect 127.0.0.2 8080" 2>/dev/null | tr '\n' ' ')
check flags/allow-net "$out" "OK EACCES "
out=$(sbx-bpf run --allow-unix "$W/sock" --allow-local-binding -- sh -c \
	"sbx-probe unix-connect $W/sock/other.sock; sbx-probe listen 127.0.0.1 0" 2>/dev/null | tr '\n' ' ')
check flags/unix-and-binding "$out" "OK OK "

echo "nameserver 2001:db8::53" >/etc/resolv.conf
out=$(sbx-bpf run --policy "$W/dom.json" -- curl -s -m 10 http://allowed.test:8080/ 2>/dev/null)
check dns/ipv6-server "$out" hello

# Without a sandbox, DNS goes where resolv.conf says (here: nowhere).
echo "nameserver 127.0.0.1" >/etc/resolv.conf
out=$(curl -s -m 10 http://blocked.test:8080/ 2>/dev/null)
check outside/dns "$out" hello

# Only the allowed question leaves (issue 16): a query stuffed with an EDNS option, odd flags and
# 0x20 case reaches the upstream as sbx-bpf's own canonical query. The upstream here is a
# recorder that answers every A query with 127.0.0.2 and keeps the exact bytes it got.
cat >"$W/recorder.py" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 5354))
open(sys.argv[1] + ".ready", "w").close()
while True:
    m, peer = s.recvfrom(4096)
    open(sys.argv[1], "ab").write(struct.pack(">H", len(m)) + m)
    qend = 12
    while m[qend]: qend += m[qend] + 1
    qend += 5
    a = m[:2] + b"\x81\x80" + m[4:6] + b"\x00\x01\x00\x00\x00\x00" + m[12:qend]
    a += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x02"
    s.sendto(a, peer)
EOF
cat >"$W/exfil.py" <<'EOF'
import socket, struct
name = b"".join(bytes([len(l)]) + l for l in b"AlLoWeD.test".split(b".")) + b"\0"
secret = b"EDNS-EXFIL-0123456789abcdef"
opt = b"\0" + struct.pack(">HHIH", 41, 4096, 0x8000, 4 + len(secret)) + struct.pack(">HH", 65001, len(secret)) + secret
q = struct.pack(">HHHHHH", 0xbeef, 0x0130, 1, 0, 0, 1) + name + struct.pack(">HH", 1, 1) + opt
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
s.sendto(q, ("10.9.9.9", 53))
r = s.recv(4096)
print("rcode=%d answers=%d case=%s" % (r[3] & 15, struct.unpack(">H", r[6:8])[0], r[12:12 + len(name)] == name))
EOF
python3 "$W/recorder.py" "$W/upstream.bin" &
REC=$!
wait_for "$W/upstream.bin.ready" 300
echo "nameserver 10.9.9.9" >/etc/resolv.conf
out=$(SBX_DNS_UPSTREAM=127.0.0.1:5354 sbx-bpf run --policy "$W/dom.json" -- python3 "$W/exfil.py" 2>"$W/exfil.err")
[ "$out" = "rcode=0 answers=1 case=True" ] && pass dns/exfil-answered ||
	fail dns/exfil-answered "got '$out', want 'rcode=0 answers=1 case=True'; stderr: $(tail -c 800 "$W/exfil.err")"
# What arrived: flags RD only, one question, one additional record (sbx-bpf's OPT); the name in
# lower case, A IN; the OPT: root, type 41, UDP size 1232, no extended rcode, no DO, no options.
got=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
m = b[2:2 + struct.unpack(">H", b[:2])[0]]
print(m[2:].hex())' "$W/upstream.bin" 2>&1)
check dns/upstream-canonical "$got" \
	"0100000100000000000107616c6c6f77656404746573740000010001000029$(printf '%04x' 1232)000000000000"
grep -q EXFIL "$W/upstream.bin" && fail dns/upstream-no-secret "the EDNS option reached the upstream" ||
	pass dns/upstream-no-secret

# The query rate limit is the policy's to set: at 1 a second with no burst, of four queries in a
# row the first is answered and the rest are REFUSED (rcode 5), with one event naming the limit.
jq '.network.dnsQueryRate = 1 | .network.dnsQueryBurst = 1' "$W/dom.json" >"$W/rate.json"
out=$(SBX_DNS_UPSTREAM=127.0.0.1:5354 sbx-bpf run --policy "$W/rate.json" --events "$W/ev-rate.json" -- \
	python3 -c '
import socket, struct
name = b"\x07allowed\x04test\x00"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
codes = []
for i in range(4):
    s.sendto(struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + name + struct.pack(">HH", 1, 1), ("10.9.9.9", 53))
    codes.append(str(s.recv(512)[3] & 15))
print(" ".join(codes))' 2>/dev/null)
check dns/policy-rate "$out" "0 5 5 5"
check_json dns/policy-rate-event "$W/ev-rate.json" \
	'[.[] | select(.op == "dns" and .rule.text == "limit: the sandbox'"'"'s DNS query rate")] | length >= 1'
kill $REC 2>/dev/null

kill $HTTP1 $HTTP2 $(cat "$W/servers") "$(cat "$W/dnsmasq.pid")" 2>/dev/null
cp "$W/resolv.conf.orig" /etc/resolv.conf 2>/dev/null
