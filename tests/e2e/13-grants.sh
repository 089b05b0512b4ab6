# Live grants on an attached cgroup: a read, a write and a connect grant
# work at once and end in the kernel when their time is up, with the daemon
# stopped; their use shows in events as "granted" with the grant's text;
# revoke takes effect at once; a grant never opens what the mandatory set
# protects, nor an address the policy denies; a bad TTL changes nothing; a
# re-attach keeps grants, detach ends them.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

CG=/sys/fs/cgroup/e2e-grants
mkdir -p "$W/data" "$W/ws" "$CG"
echo secret >"$W/data/secret"
echo other >"$W/data/other"
inside() { sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec "$@"' sh "$@"; }
probe() { inside sbx-probe "$@" 2>/dev/null; }
rec=/run/sbx-bpf/sandboxes/$(stat -c %i "$CG").json
states() { sbx-bpf grants "$CG" --json | jq -r '[.[] | "\(.id):\(.state)"] | join(" ")'; }

sbx-bpf daemon --events "$W/ev1.json" 2>"$W/d1.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d1.err")"
cat >"$W/p.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/data/secret" ], "allowWrite": [ "$W/ws" ] } }
EOF
sbx-bpf attach "$CG" --policy "$W/p.json" 2>"$W/a.err"
check attach/exit "$?" 0
check before/read-denied "$(probe open "$W/data/secret")" EACCES
check before/write-denied "$(probe open "$W/out" creat)" EACCES
check before/ws-writable "$(probe open "$W/ws/f" creat)" OK
check before/connect-denied "$(probe connect 127.0.0.2 8081)" EACCES

# --- file grants, then their expiry with the daemon stopped -------------------------------
# Both grants end 3 s after the first one (file grants end with the earliest):
# everything up to the kill must take less than that.
sbx-bpf grant "$CG" --read "$W/data/secret" --ttl 3s >"$W/g1.out" 2>"$W/g1.err"
check grant-read/exit "$?" 0
check grant-read/works "$(probe open "$W/data/secret")" OK
sbx-bpf grant "$CG" --write "$W/out" --ttl 3s >"$W/g2.out" 2>"$W/g2.err"
check grant-write/exit "$?" 0
check grant-write/create-works "$(probe open "$W/out" creat)" OK
check grant-write/read-grant-still "$(probe open "$W/data/secret")" OK
check grants/active "$(states)" "1:active 2:active"
kill "$D"; wait "$D" 2>/dev/null
grep -qE "^grant 1: read $W/data/secret until 20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z \(3s\)\$" \
	"$W/g1.out" && pass grant-read/output || fail grant-read/output "$(cat "$W/g1.out" "$W/g1.err")"
grep -q "^grant 2: write $W/out until .*Z (3s)\$" "$W/g2.out" && pass grant-write/output ||
	fail grant-write/output "$(cat "$W/g2.out" "$W/g2.err")"
check other/unchanged "$(probe open "$W/data/other")" OK
sleep 4
check expired/read-denied "$(probe open "$W/data/secret")" EACCES
check expired/write-denied "$(probe open "$W/out" w)" EACCES
check expired/ws-still-writable "$(probe open "$W/ws/g" creat)" OK
check expired/grants-json "$(states)" "1:expired 2:expired"
check expired/expires-in "$(sbx-bpf grants "$CG" --json | jq -r '[.[].expires_in] | join(" ")')" "0 0"
check expired/list-active-grants \
	"$(sbx-bpf list --json | jq -r ".[] | select(.cgroup == \"$CG\") | .active_grants")" 0

# A restarted daemon collects what the first one had not read; either wrote the grants' use.
# It also serves the live-grants gauge (checked at revoke, below).
echo '{ "sinks": [ { "type": "prometheus", "listen": "127.0.0.1:9465" } ] }' >"$W/agent.json"
sbx-bpf daemon --events "$W/ev2.json" --config "$W/agent.json" 2>"$W/d2.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/restart "$(cat "$W/d2.err")"
sleep 1
cat "$W/ev1.json" "$W/ev2.json" >"$W/ev12.json" 2>/dev/null
check_json events/read-granted "$W/ev12.json" \
	"any(.[]; .verdict == \"granted\" and .op == \"read\" and .path == \"$W/data/secret\" and
	 (.rule.text | startswith(\"grant 1: read $W/data/secret (until \")) and .rule.id == $((0x60000001)))"
check_json events/create-granted "$W/ev12.json" \
	"any(.[]; .verdict == \"granted\" and .op == \"create\" and .path == \"$W/out\" and
	 (.rule.text | startswith(\"grant 2: write $W/out (until \")))"
check_json events/denied-after-expiry "$W/ev12.json" \
	"any(.[]; .verdict == \"denied\" and .op == \"read\" and .path == \"$W/data/secret\" and
	 .rule.text == \"denyRead $W/data/secret\")"

# --- a connect grant ------------------------------------------------------------------------
python3 -m http.server --bind 127.0.0.2 --directory "$W" 8081 >/dev/null 2>&1 &
HTTP=$!
for i in $(seq 150); do sbx-probe connect 127.0.0.2 8081 >/dev/null 2>&1 && break; sleep 0.2; done
sbx-bpf grant "$CG" --connect 127.0.0.2:8081 --ttl 3s >"$W/g3.out" 2>&1
check connect/exit "$?" 0
check connect/works "$(probe connect 127.0.0.2 8081)" OK
check connect/other-port-denied "$(probe connect 127.0.0.2 8082)" EACCES
check connect/other-address-denied "$(probe connect 127.0.0.3 8081)" EACCES
grep -q "^grant 3: connect 127.0.0.2:8081 until " "$W/g3.out" && pass connect/output ||
	fail connect/output "$(cat "$W/g3.out")"
wait_event connect/event-granted "$W/ev2.json" \
	"any(.[]; .verdict == \"granted\" and .op == \"connect\" and .net.address == \"127.0.0.2\" and
	 .net.port == 8081 and (.rule.text | startswith(\"grant 3: connect 127.0.0.2:8081 (until \")))"
sleep 4
check connect/expired "$(probe connect 127.0.0.2 8081)" EACCES
check connect/grants-json "$(sbx-bpf grants "$CG" --json | jq -r '.[] | select(.id == 3) | .state')" expired

# --- revoke takes effect at once ---------------------------------------------------------------
sbx-bpf grant "$CG" --read "$W/data/secret" --connect 127.0.0.2:8081 --ttl 60s >"$W/g4.out" 2>&1
check revoke/granted "$(probe open "$W/data/secret") $(probe connect 127.0.0.2 8081)" "OK OK"
check revoke/list-active-grants \
	"$(sbx-bpf list --json | jq -r ".[] | select(.cgroup == \"$CG\") | .active_grants")" 2
# The gauge is counted at most every 10 s, each record read again only once it changed: wait for it.
gauge() { curl -s -m 5 http://127.0.0.1:9465/metrics | awk '$1 == "sbx_grants" { print $2 }'; }
wait_gauge() {
	i=0
	while [ $i -lt 250 ] && [ "$(gauge)" != "$1" ]; do sleep 0.1; i=$((i + 1)); done
	gauge
}
check gauge/two-live "$(wait_gauge 2)" 2
sbx-bpf revoke "$CG" 4 >"$W/r4.out" 2>&1
check revoke/exit "$?" 0
check revoke/output "$(cat "$W/r4.out")" "revoked grant 4: read $W/data/secret"
check revoke/read-denied-now "$(probe open "$W/data/secret")" EACCES
check gauge/record-read-again "$(wait_gauge 1)" 1
check revoke/connect-kept "$(probe connect 127.0.0.2 8081)" OK
sbx-bpf revoke "$CG" 5 --json >"$W/r5.out" 2>&1
check revoke/json "$(jq -c .revoked "$W/r5.out")" "[5]"
check revoke/connect-denied-now "$(probe connect 127.0.0.2 8081)" EACCES
sbx-bpf revoke "$CG" 4 2>"$W/r-again.err"
check revoke/unknown-id-exit-2 "$?" 2
grep -q "has no grant 4" "$W/r-again.err" && pass revoke/unknown-id-message ||
	fail revoke/unknown-id-message "$(cat "$W/r-again.err")"

# --- paths: relative to the working directory, as in policies -------------------------------
out=$(cd "$W" && sbx-bpf grant "$CG" --read data/secret --ttl 60s --json)
check relative/target "$(echo "$out" | jq -r '.grants[0].target')" "$W/data/secret"
check relative/works "$(probe open "$W/data/secret")" OK
sbx-bpf revoke "$CG" --all >/dev/null
check revoke-all/denied "$(probe open "$W/data/secret")" EACCES

# --- the mandatory set stays out of reach -------------------------------------------------------
sbx-bpf grant "$CG" --write "$W/ws/.bashrc" --ttl 60s 2>"$W/m.err"
check mandatory/refused-exit-2 "$?" 2
grep -q "would change nothing: the policy's 'mandatory \*\*/.bashrc' decides there" "$W/m.err" &&
	pass mandatory/refused-message || fail mandatory/refused-message "$(cat "$W/m.err")"
check mandatory/still-denied "$(probe open "$W/ws/.bashrc" creat)" EACCES
sbx-bpf grant "$CG" --write "$W" --ttl 60s >/dev/null 2>&1
check mandatory/parent-grant-exit "$?" 0
check mandatory/parent-grant-works "$(probe open "$W/new" creat)" OK
check mandatory/beneath-parent-grant "$(probe open "$W/.bashrc" creat)" EACCES
check mandatory/hooks-beneath-parent-grant "$(mkdir -p "$W/r/.git/hooks"; probe open "$W/r/.git/hooks/x" creat)" EACCES
sbx-bpf revoke "$CG" --all >/dev/null

# --- a bad TTL changes nothing --------------------------------------------------------------------
cp "$rec" "$W/rec.before"
sbx-bpf grant "$CG" --read "$W/data/secret" --ttl 2x 2>"$W/ttl.err"
check bad-ttl/exit-2 "$?" 2
grep -q "grant: --ttl 2x: not a duration" "$W/ttl.err" && pass bad-ttl/message || fail bad-ttl/message "$(cat "$W/ttl.err")"
cmp -s "$rec" "$W/rec.before" && pass bad-ttl/record-unchanged || fail bad-ttl/record-unchanged "$(cat "$rec")"
check bad-ttl/still-denied "$(probe open "$W/data/secret")" EACCES

# --- a domain grant: the name's addresses now ------------------------------------------------------
cp /etc/hosts "$W/hosts.orig"
echo "127.0.0.2 granted.e2e.test" >>/etc/hosts
sbx-bpf grant "$CG" --domain granted.e2e.test:8081 --ttl 60s >"$W/g-dom.out" 2>&1
check domain/exit "$?" 0
grep -q "domain granted.e2e.test:8081 until .*: 127.0.0.2 (resolved when granted: later changes of the name's addresses are not followed)" \
	"$W/g-dom.out" && pass domain/output || fail domain/output "$(cat "$W/g-dom.out")"
check domain/works "$(probe connect 127.0.0.2 8081)" OK
check domain/port-only "$(probe connect 127.0.0.2 8082)" EACCES
cp "$W/hosts.orig" /etc/hosts
sbx-bpf revoke "$CG" --all >/dev/null

# --- the policy's deny list wins over a connect grant ----------------------------------------------
cat >"$W/p2.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/data/secret" ], "allowWrite": [ "$W/ws" ] },
  "network": { "deny": [ "127.0.0.4" ] } }
EOF
sbx-bpf attach "$CG" --policy "$W/p2.json" 2>>"$W/a.err"
check deny/attach "$?" 0
sbx-bpf grant "$CG" --connect 127.0.0.4:8081 --connect 127.0.0.5:8081 --ttl 60s >/dev/null 2>&1
check deny/grant-exit "$?" 0
check deny/denied-address-stays-denied "$(probe connect 127.0.0.4 8081)" EACCES
check deny/other-granted "$(probe connect 127.0.0.5 8081)" ECONNREFUSED	# allowed: nobody listens

# --- a re-attach keeps the grants (on the new policy id); detach ends them -------------------------
sbx-bpf grant "$CG" --read "$W/data/secret" --ttl 60s >/dev/null 2>&1
sbx-bpf attach "$CG" --policy "$W/p.json" 2>"$W/re.err"
check reattach/exit "$?" 0
grep -q "3 live grants of $CG stay in force on the new policy" "$W/re.err" && pass reattach/said ||
	fail reattach/said "$(cat "$W/re.err")"
check reattach/read-grant-kept "$(probe open "$W/data/secret")" OK
check reattach/connect-grant-kept "$(probe connect 127.0.0.5 8081)" ECONNREFUSED
check reattach/states "$(sbx-bpf grants "$CG" --json | jq -r '[.[] | select(.state == "active")] | length')" 3
# Ids so far: 1-3 above, 4-5 revoked, 6 relative, 7 the parent, 8 the domain, 9-10 the deny test.
check reattach/rule-text "$(jq -r '.grants[] | select(.id == 11) | .text' "$rec" | cut -d' ' -f1-4)" \
	"grant 11: read $W/data/secret"
sbx-bpf detach "$CG"
check detach/exit "$?" 0
sbx-bpf attach "$CG" --policy "$W/p.json" 2>"$W/re2.err"
check detach/fresh-attach-no-grants "$(sbx-bpf grants "$CG" --json | jq length)" 0
check detach/read-grant-gone "$(probe open "$W/data/secret")" EACCES
check detach/connect-grant-gone "$(probe connect 127.0.0.5 8081)" EACCES
sbx-bpf detach "$CG"

# --- a grant on a sandbox still arming (the OCI hook's --fresh --from-exec) puts it in force --
# The first file grant on a --fresh sandbox turns on the judging of descriptor uses: it writes
# the whole entry back. Had it kept the arming flag, an exec between its read and its write
# would be undone: the sandbox out of force until the next exec. So it never writes the flag:
# the policy is in force at once. A shell in the cgroup, which execs nothing, opens with
# redirections (builtins only: an exec would arm the sandbox itself).
sbx-bpf attach "$CG" --policy "$W/p.json" --fresh --from-exec 2>"$W/arm.err"
check arming/attach "$?" 0
CGID=$(stat -c %i "$CG")
check arming/listed "$(sbx-bpf list --json | jq -c ".[] | select(.cgroup_id == $CGID) | [.mode, .arming]")" '["enforce",true]'
rm -f "$W/go"
# Its output goes through a pipe: a file opened outside would be judged on use once in force.
sh -c 'echo $$ >'"$CG"'/cgroup.procs
	if (read l <'"$W/data/secret"'); then echo OK; else echo EACCES; fi
	while [ ! -e '"$W/go"' ]; do :; done
	if (read l <'"$W/data/secret"'); then echo OK; else echo EACCES; fi' 2>&1 | cat >"$W/arm.out" &
ARM=$!
i=0
while [ ! -s "$W/arm.out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sbx-bpf grant "$CG" --read "$W/data/other" --ttl 60s >/dev/null 2>"$W/arm-grant.err"
check arming/grant "$?" 0
check arming/in-force "$(sbx-bpf list --json | jq -c ".[] | select(.cgroup_id == $CGID) | [.mode, .arming]")" '["enforce",false]'
touch "$W/go"
wait "$ARM"
check arming/before-and-after "$(grep -E '^(OK|EACCES)$' "$W/arm.out" | tr '\n' ' ')" "OK EACCES "
wait_event arming/event "$W/ev2.json" "any(.[]; .type == \"violation\" and .op == \"read\" and
	.path == \"$W/data/secret\" and .sandbox_cgroup_id == $CGID)"
sbx-bpf detach "$CG"

kill "$HTTP" "$D" 2>/dev/null; wait "$HTTP" "$D" 2>/dev/null
rmdir "$CG" 2>/dev/null
