# Descriptors are judged when they are used, against the policy in force
# then (fs.bpf.c file_permission): a descriptor opened under one policy is
# refused under the next within the same process, whose allowed uses the
# kernel remembers for 10 ms only; `run`'s stdin, stdout and stderr, opened
# by its caller, are not judged; other inherited descriptors and an attached
# process's redirects are.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

CG=/sys/fs/cgroup/e2e-fd
mkdir -p "$W/out" "$W/ans" "$W/data" "$W/protected" "$CG"
echo content >"$W/data/f"
: >"$W/out/log"

sbx-bpf daemon --events "$W/ev.json" 2>"$W/d.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d.err")"
cat >"$W/a.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W/out", "$W/ans" ] } }
EOF
cat >"$W/b.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W/ans" ], "denyRead": [ "$W/data" ] } }
EOF
sbx-bpf attach "$CG" --policy "$W/a.json" 2>"$W/a.err"
check attach/exit "$?" 0

# One process in the cgroup holds a descriptor for writing $W/out/log and one
# for reading $W/data/f, opened under policy a. For each line N on the fifo it
# writes and reads once, and answers "WRITE READ" (OK or the errno) in ans/N.
mkfifo "$W/cmd"
sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec python3 -B -c "$0" "$1"' '
import errno, os, sys
w = sys.argv[1]
out = os.open(w + "/out/log", os.O_WRONLY | os.O_APPEND)
data = os.open(w + "/data/f", os.O_RDONLY)
def use(f):
    try:
        f()
        return "OK"
    except OSError as e:
        return errno.errorcode[e.errno]
for line in open(w + "/cmd"):
    n = line.strip()
    a = use(lambda: os.write(out, b"x\n")) + " " + use(lambda: os.pread(data, 1, 0))
    with open(w + "/ans/" + n, "w") as f:
        f.write(a + "\n")
' "$W" 2>"$W/writer.err" &
WRITER=$!
exec 6>"$W/cmd"
# ask N: the writer's answer to command N (up to 10 s).
ask() {
	echo "$1" >&6
	i=0
	while [ ! -s "$W/ans/$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	cat "$W/ans/$1" 2>/dev/null || echo "no answer: $(cat "$W/writer.err")"
}
check use/policy-a "$(ask 1)" "OK OK"
check use/policy-a-again "$(ask 2)" "OK OK"
sbx-bpf attach "$CG" --policy "$W/b.json" 2>>"$W/a.err"
check attach/replace-exit "$?" 0
check use/policy-b "$(ask 3)" "EACCES EACCES"
check_json use/write-event "$W/ev.json" \
	"any(.[]; .op == \"write\" and .path == \"$W/out/log\" and .descriptor == \"use\" and .verdict == \"denied\")"
check_json use/read-event "$W/ev.json" \
	"any(.[]; .op == \"read\" and .path == \"$W/data/f\" and .descriptor == \"use\" and .verdict == \"denied\")"
sbx-bpf attach "$CG" --policy "$W/a.json" 2>>"$W/a.err"
check use/policy-a-back "$(ask 4)" "OK OK"
check use/written "$(wc -l <"$W/out/log")" 3
exec 6>&-
wait "$WRITER"

# An attached process's redirect is the process's own descriptor: judged.
sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec sh -c "echo redirected"' >"$W/protected/attached" 2>"$W/redir.err"
check attach-redirect/refused "$?" 1
check attach-redirect/unchanged "$(wc -c <"$W/protected/attached")" 0
check_json attach-redirect/event "$W/ev.json" \
	"any(.[]; .op == \"write\" and .path == \"$W/protected/attached\" and .descriptor == \"use\")"
sbx-bpf detach "$CG" 2>>"$W/a.err"
check detach/exit "$?" 0

# run's stdio is its caller's: a redirect into a file the policy does not let
# the sandbox write, stdin from a read-denied file. fd 3, inherited the same
# way but not stdio, is judged. (A policy of its own: the default one lets
# the temp dirs be written.)
cat >"$W/r.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W/ans" ], "denyRead": [ "$W/data" ] } }
EOF
sbx-bpf run --policy "$W/r.json" --events "$W/run.json" -- \
	sh -c 'cat; echo written; echo more >&3' <"$W/data/f" >"$W/protected/stdout" 2>"$W/run.err" \
	3>"$W/protected/fd3"
check run-stdio/exit "$?" 1
check run-stdio/stdin-and-stdout "$(tr '\n' ' ' <"$W/protected/stdout")" "content written "
check run-stdio/fd3-unchanged "$(wc -c <"$W/protected/fd3")" 0
check_json run-stdio/fd3-event "$W/run.json" \
	"any(.[]; .op == \"write\" and .path == \"$W/protected/fd3\" and .descriptor == \"use\")"
check_json run-stdio/no-stdio-event "$W/run.json" \
	"all(.[]; .path != \"$W/protected/stdout\" and .path != \"$W/data/f\")"
kill "$D"; wait "$D" 2>/dev/null
rmdir "$CG" 2>/dev/null
