#!/usr/bin/env bash
# `sbx-bpf events`, the real binary against a stand-in for the daemon's
# socket (a few lines of Python speaking docs/agent.md's protocol): the
# requests it sends, the lines it shows, its exit codes.
# Prints one "PASS name" / "FAIL name: why" line per check.
B=${BUILD:-build}/sbx-bpf
T=events
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
W=$(mktemp -d); SRV=
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$W"' EXIT

# No daemon: a clear error and exit 1, in both output modes.
"$B" events --socket "$W/none.sock" >/dev/null 2>"$W/err"; check no-daemon-exit-1 "$?" 1
check no-daemon-message "$(cat "$W/err")" \
	"sbx-bpf: error: no daemon is running ($W/none.sock: No such file or directory)"
"$B" --json events --follow --socket "$W/none.sock" >"$W/out" 2>/dev/null; check no-daemon-json-exit-1 "$?" 1
jq -e '.error | test("^no daemon is running")' "$W/out" >/dev/null && pass no-daemon-json-error ||
	fail no-daemon-json-error "$(cat "$W/out")"
if [ ! -e /run/sbx-bpf/events.sock ]; then
	"$B" events 2>"$W/err"; check no-daemon-default-exit-1 "$?" 1
	grep -qF "no daemon is running (/run/sbx-bpf/events.sock: No such file or directory)" "$W/err" &&
		pass no-daemon-default-path || fail no-daemon-default-path "$(cat "$W/err")"
fi

"$B" events --help >"$W/out"; check help-exit-0 "$?" 0
grep -q "^Usage: sbx-bpf events \[--follow\] \[--cgroup CGROUP|ID\] \[--backlog N\] \[--json\]" "$W/out" &&
	pass help-usage || fail help-usage "$(head -2 "$W/out")"
"$B" --help | grep -q '^  events ' && pass help-lists-events || fail help-lists-events "not in sbx-bpf --help"
"$B" events --bogus >/dev/null 2>&1; check bad-option-exit-2 "$?" 2
"$B" events extra >/dev/null 2>&1; check extra-argument-exit-2 "$?" 2
"$B" events --backlog 1025 >/dev/null 2>"$W/err"; check backlog-too-big-exit-2 "$?" 2
grep -q "0 to 1024" "$W/err" && pass backlog-range-message || fail backlog-range-message "$(cat "$W/err")"
"$B" events --backlog 1x >/dev/null 2>&1; check backlog-not-a-number-exit-2 "$?" 2
"$B" events --cgroup /sys/fs/cgroup/sbx-no-such-cgroup --socket "$W/none.sock" >/dev/null 2>"$W/err"
check unknown-cgroup-exit-1 "$?" 1
grep -q "cannot find cgroup" "$W/err" && pass unknown-cgroup-message || fail unknown-cgroup-message "$(cat "$W/err")"

# The stand-in: logs each request, answers by what was asked.
command -v python3 >/dev/null || { fail stand-in "python3 missing"; exit 0; }
python3 - "$W" <<'EOF' &
import json, os, socket, sys
w = sys.argv[1]
ev = {"schema": "sbx-bpf.event/3", "type": "violation", "verdict": "denied", "op": "read",
      "path": "/etc/shadow", "path2": None, "rule": {"id": 0, "text": "denyRead /etc/shadow"},
      "net": None, "domain": None, "path_unresolved": False, "moves_between_rules": False,
      "directory_only": False, "errno": 13, "cgroup_id": 77, "sandbox_cgroup_id": 76, "sandbox": None,
      "process": {"pid": 42, "tid": 42, "ppid": 1, "uid": 0, "comm": "cat"}}
net = dict(ev, op="connect", path="", rule={"id": None, "text": "default: no network rule and no DNS answer allows it"},
           net={"family": "inet", "protocol": "tcp", "protocol_number": 6, "address": "10.0.0.1", "port": 443,
                "abstract": False}, domain="example.com")
life = {"schema": "sbx-bpf.event/3", "type": "lifecycle", "event": "oom_kill", "detail": "1 process(es) killed",
        "sandbox": "agent"}
lines = [json.dumps(ev, separators=(",", ":")), json.dumps({"type": "gap", "dropped": 3}),
         json.dumps(net, separators=(",", ":")), json.dumps(life)]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(w + "/ev.sock"); s.listen(8)
open(w + "/ready", "w").close()
while True:
    c, _ = s.accept()
    req = c.makefile().readline()
    with open(w + "/requests", "a") as f:
        f.write(req)
    r = json.loads(req)
    if r.get("backlog") == 7:
        c.sendall(b'{"error":"too many watchers (64)"}\n')
    else:
        c.sendall(("\n".join(lines) + "\n").encode())
    if r["cmd"] == "follow" and r.get("cgroup") == 999:
        c.recv(1)			# stays until the watcher leaves
    c.close()
EOF
SRV=$!
i=0; while [ ! -e "$W/ready" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
S="--socket $W/ev.sock"
req() { sed -n "${1}p" "$W/requests"; }

"$B" events $S >"$W/out" 2>"$W/err"; check recent-exit-0 "$?" 0
check recent-request "$(req 1)" '{"cmd":"recent","cgroup":null,"backlog":100}'
cat >"$W/want" <<'EOF'
sbx-bpf: denied read /etc/shadow (denyRead /etc/shadow) pid 42 cat
sbx-bpf: 3 events dropped here: this watcher fell behind the daemon
sbx-bpf: denied connect 10.0.0.1:443/tcp [example.com] (default: no network rule and no DNS answer allows it) pid 42 cat
sbx-bpf: oom_kill in sandbox agent: 1 process(es) killed
EOF
diff -u "$W/want" "$W/out" >"$W/diff" && pass recent-human-lines || fail recent-human-lines "$(cat "$W/diff")"

"$B" --json events $S --backlog 5 --cgroup 1234 >"$W/out" 2>"$W/err"; check json-exit-0 "$?" 0
check json-request "$(req 2)" '{"cmd":"recent","cgroup":1234,"backlog":5}'
check json-lines-verbatim "$(jq -c . "$W/out" | head -2 | tail -1)" '{"type":"gap","dropped":3}'
check json-line-count "$(wc -l <"$W/out")" 4

# --follow: the daemon closing the stream is the daemon gone: exit 1.
"$B" events --follow $S >"$W/out" 2>"$W/err"; check follow-daemon-gone-exit-1 "$?" 1
check follow-request "$(req 3)" '{"cmd":"follow","cgroup":null,"backlog":0}'
check follow-lines-before-the-end "$(wc -l <"$W/out")" 4
grep -q "the daemon closed $W/ev.sock" "$W/err" && pass follow-says-daemon-gone || fail follow-says-daemon-gone "$(cat "$W/err")"

# SIGINT ends a watcher with exit 0, after the lines it had.
"$B" events --follow --json --cgroup 999 $S >"$W/out" 2>"$W/err" &
P=$!
i=0; while [ "$(wc -l <"$W/out")" -lt 4 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT "$P"; wait "$P"; check follow-sigint-exit-0 "$?" 0
check follow-sigint-lines "$(wc -l <"$W/out")" 4

# The daemon refuses: its error, exit 1.
"$B" events --follow --backlog 7 $S >/dev/null 2>"$W/err"; check refused-exit-1 "$?" 1
check refused-message "$(cat "$W/err")" "sbx-bpf: error: the daemon refused: too many watchers (64)"
exit 0
