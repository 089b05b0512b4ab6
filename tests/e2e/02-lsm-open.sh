# One real LSM program loaded by sbx-bpf denies an open inside a sandbox
# cgroup, reports it, and lets the same open through outside the cgroup.
. /sbx/tests/e2e/lib.sh

D=$W/data
mkdir -p "$D/pub"
echo s3cret >"$D/secret"
echo hello >"$D/pub/readme"
ln -s "$D/secret" "$D/pub/link-to-secret"

# Denied inside: errno and event.
out=$(sbx-bpf run --name e2e-deny --events "$W/ev1.json" --deny-read "$D/secret" -- \
	sbx-probe open "$D/secret" 2>"$W/err1")
rc=$?
check sandboxed-open-errno "$out" EACCES
check sandboxed-open-exit-status "$rc" 1
check_json event-denied-read "$W/ev1.json" \
	"length == 1 and .[0].verdict == \"denied\" and .[0].op == \"read\" and .[0].path == \"$D/secret\""
check_json event-errno-and-rule "$W/ev1.json" \
	".[0].errno == 13 and .[0].rule.text == \"denyRead $D/secret\""
check_json event-process "$W/ev1.json" \
	'.[0].process.comm == "sbx-probe" and .[0].process.pid > 1 and .[0].process.uid == 0 and .[0].schema == "sbx-bpf.event/3"'
check_json event-sandbox "$W/ev1.json" '.[0].sandbox == "e2e-deny" and .[0].cgroup_id == .[0].sandbox_cgroup_id'
grep -q "sbx-bpf: denied read $D/secret (denyRead $D/secret) pid [0-9]* sbx-probe" "$W/err1" &&
	pass human-line || fail human-line "stderr: $(cat "$W/err1")"
[ ! -e /sys/fs/cgroup/sbx-bpf/e2e-deny ] && pass cgroup-removed || fail cgroup-removed "still there"

# Same sandbox, a file not under the rule: allowed, no event.
out=$(sbx-bpf run --events "$W/ev2.json" --deny-read "$D/secret" -- sbx-probe open "$D/pub/readme" 2>/dev/null)
check sandboxed-other-file-ok "$out" OK
check_json no-event-when-allowed "$W/ev2.json" 'length == 0'

# A symlink does not help: the verdict and the event name the real file.
out=$(sbx-bpf run --events "$W/ev3.json" --deny-read "$D/secret" -- sbx-probe open "$D/pub/link-to-secret" 2>/dev/null)
check symlink-denied "$out" EACCES
check_json symlink-event-real-path "$W/ev3.json" ".[0].path == \"$D/secret\""

# Every way the walk copies a name: names under 32 bytes from the dentry's
# inline store 8 bytes at a time, longer ones by a read of their own (and
# 32 to 39 bytes, inline on 6.8+, the same way as longer ones). For each
# length, a file under a directory of that length: the rule on it denies it
# and its event names it byte for byte; its sibling, which differs in the
# last byte only, is allowed.
N=$D/names
alpha=$(printf 'abcdefghijklmnopqrstuvwxyz0123456789%.0s' $(seq 8))
denied="" probes="" want=""
for n in 1 7 8 9 15 16 17 23 24 25 31 32 33 40 100 255; do
	name=$(printf %s "$alpha" | head -c "$n")
	other=$(printf %s "$alpha" | head -c $((n - 1)))_
	mkdir -p "$N/$name"
	echo x >"$N/$name/$name"
	echo y >"$N/$name/$other"
	denied="$denied --deny-read $N/$name/$name"
	probes="$probes $N/$name/$name $N/$name/$other"
	want="$want EACCES OK"
done
out=$(sbx-bpf run --events "$W/ev-names.json" $denied -- \
	sh -c 'for f; do sbx-probe open "$f"; done' sh $probes 2>/dev/null | tr '\n' ' ')
check name-lengths-verdicts "$out" "${want# } "
paths=$(printf '%s\n' $denied | grep -v '^--' | jq -R . | jq -s -c sort)
check_json name-lengths-event-paths "$W/ev-names.json" \
	"[.[] | select(.op == \"read\" and .verdict == \"denied\") | .path] | sort == $paths"

# Outside the cgroup, while the program is attached and a sandbox is live:
# the outside open succeeds, a grandchild inside is denied, only it is reported.
rm -f "$W/ready" "$W/go"
sbx-bpf run --name e2e-live --events "$W/ev4.json" --deny-read "$D/secret" -- \
	sh -c "sh -c 'sbx-probe open $D/secret' >$W/inside.txt; touch $W/ready;
	       while [ ! -e $W/go ]; do sleep 0.1; done" 2>/dev/null &
runpid=$!
if wait_for "$W/ready" 300; then
	check outside-open-ok "$(sbx-probe open "$D/secret")" OK
	check outside-content-readable "$(cat "$D/secret")" s3cret
	[ -d /sys/fs/cgroup/sbx-bpf/e2e-live ] && pass sandbox-cgroup-exists || fail sandbox-cgroup-exists missing
else
	fail outside-open-ok "sandbox did not get ready"
fi
touch "$W/go"
wait $runpid
check grandchild-denied "$(cat "$W/inside.txt")" EACCES
check_json only-inside-reported "$W/ev4.json" "length == 1 and .[0].path == \"$D/secret\""

# Audit mode: nothing denied, every would-be denial reported.
out=$(sbx-bpf run --audit --events "$W/ev5.json" --deny-read "$D/secret" -- sbx-probe open "$D/secret" 2>/dev/null)
check audit-allows "$out" OK
check_json audit-event "$W/ev5.json" 'length == 1 and .[0].verdict == "audit" and .[0].errno == 0'

# allow-read beneath deny-read re-allows; the most specific rule wins.
out=$(sbx-bpf run --deny-read "$D" --allow-read "$D/pub" -- sbx-probe open "$D/pub/readme" 2>/dev/null)
check nested-allow-ok "$out" OK
out=$(sbx-bpf run --deny-read "$D" --allow-read "$D/pub" -- sbx-probe open "$D/secret" 2>/dev/null)
check nested-deny-outside-allow "$out" EACCES

# Exit status: the command's own, or 128+signal.
sbx-bpf run -- sh -c 'exit 7' 2>/dev/null; check exit-status-propagated "$?" 7
sbx-bpf run -- sh -c 'kill -TERM $$' 2>/dev/null; check signal-exit-status "$?" 143
sbx-bpf run -- /nonexistent/cmd 2>/dev/null; check exec-failure-127 "$?" 127
sbx-bpf run -- /nonexistent/cmd 2>&1 | grep -q "cannot execute '/nonexistent/cmd': No such file or directory"
check exec-failure-says-why "$?" 0
# The command starts with every signal at its default and none blocked, whatever run inherited
# (here: three ignored), though run spawns it with all of them blocked.
out=$( (trap '' INT QUIT USR1; sbx-bpf run -- grep -E '^Sig(Blk|Ign)' /proc/self/status) 2>/dev/null | tr -d ' \t\n')
check child-signals-default "$out" "SigBlk:0000000000000000SigIgn:0000000000000000"
# A file without #! is run by sh, as execvp does (the fallback copies argv onto the child's stack).
printf 'echo "script $# $1"\n' >"$W/noshebang" && chmod +x "$W/noshebang"
out=$(sbx-bpf run -- "$W/noshebang" $(seq 5000) 2>/dev/null)
check exec-script-fallback "$out" "script 5000 1"

# Fail closed: a file whose path is too long for bpf_d_path is denied in any
# sandbox, with an event that says so; outside, the same open works.
python3 - "$D" <<'PY'
import os, sys
os.chdir(sys.argv[1])
for i in range(50):                      # 50 * 101 bytes > 4096
    os.mkdir("d" * 100); os.chdir("d" * 100)
open("deep-file", "w").write("x")
PY

cat >"$W/deep.py" <<PY
import os, sys
os.chdir("$D")
for i in range(50): os.chdir("d" * 100)
try:
    open("deep-file").read(); print("OK")
except PermissionError: print("EACCES")
except OSError as e: print("E%d" % e.errno)
PY
check long-path-outside-ok "$(python3 "$W/deep.py")" OK
out=$(sbx-bpf run --events "$W/ev6.json" --deny-read /nonexistent -- python3 "$W/deep.py" 2>"$W/err6")
check long-path-denied "$out" EACCES
check_json long-path-event-unresolved "$W/ev6.json" \
	'map(select(.path_unresolved)) | length >= 1 and (.[0].rule.id == null) and .[0].errno == 13'
grep -q "unresolvable path" "$W/err6" && pass long-path-human-line || fail long-path-human-line "$(cat "$W/err6")"

# A second sandbox with a live sandbox's name is refused, and the live one
# is left alone (not killed, not removed).
rm -f "$W/ready" "$W/go"
sbx-bpf run --name e2e-dup -- sh -c "touch $W/ready; while [ ! -e $W/go ]; do sleep 0.1; done; echo survived >$W/dup.txt" \
	2>/dev/null &
first=$!
wait_for "$W/ready" 300
sbx-bpf run --name e2e-dup -- true 2>"$W/err7"; check duplicate-name-exit-1 "$?" 1
grep -q "File exists" "$W/err7" && pass duplicate-name-message || fail duplicate-name-message "$(cat "$W/err7")"
[ -d /sys/fs/cgroup/sbx-bpf/e2e-dup ] && pass duplicate-leaves-live-cgroup || fail duplicate-leaves-live-cgroup "removed"
touch "$W/go"; wait $first
check live-sandbox-survived "$(cat "$W/dup.txt" 2>/dev/null)" survived
