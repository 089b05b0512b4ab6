# The daemon's sinks against real receivers. A real rsyslogd takes the
# syslog sink's RFC 5424 messages over UDP, TCP (octet counting) and a unix
# datagram socket and writes the fields its RFC 5424 parser found to one
# file per input; the JSON lines and OCSF files parse with jq and hold the
# fields docs/events.md and docs/agent.md promise; /metrics passes
# `promtool check metrics`. One record has one seq in every sink.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

PIN=/sys/fs/bpf/sbx
CG=/sys/fs/cgroup/e2e-sinks
UDP=5515 TCP=5516 PROM=9465
R=$W/rsyslog
SECRET=$W/data/secret
mkdir -p "$R" "$W/data" "$CG"
echo secret >"$SECRET"
# probe N: `sbx-probe open $SECRET` in the cgroup, its pid in $W/pidN (written
# before the shell joins the cgroup: the policy denies writes there; then it
# execs the probe, which keeps the pid).
probe() {
	sh -c 'echo $$ >"$1" && echo $$ >'"$CG"'/cgroup.procs && exec sbx-probe open "$2"' sh "$W/pid$1" "$SECRET"
}
# wait_grep FILE STRING TENTHS: until FILE holds STRING.
wait_grep() {
	i=0
	while ! grep -qF -- "$2" "$1" 2>/dev/null && [ $i -lt "$3" ]; do sleep 0.1; i=$((i + 1)); done
	grep -qF -- "$2" "$1" 2>/dev/null
}

# rsyslogd: each input has its own ruleset and file. The template writes what
# the parser made of the message: protocol-version is 1 only for a message
# parsed as RFC 5424 (0 after a fallback to RFC 3164, or with a TCP frame's
# length left in front). imuxsock needs its special parser off to parse
# RFC 5424 headers at all (docs/agent.md, rsyslog issue 4749).
cat >"$R/rsyslog.conf" <<EOF
global(workDirectory="$R" net.enableDNS="off")
module(load="imudp")
module(load="imtcp")
module(load="imuxsock" SysSock.Use="off")
template(name="sbx" type="string"
	 string="%protocol-version% %pri% %hostname% %app-name% %procid% %msgid% %structured-data% %msg%\n")
ruleset(name="udp") { action(type="omfile" file="$R/udp.log" template="sbx") }
ruleset(name="tcp") { action(type="omfile" file="$R/tcp.log" template="sbx") }
ruleset(name="unix") { action(type="omfile" file="$R/unix.log" template="sbx") }
input(type="imudp" address="127.0.0.1" port="$UDP" ruleset="udp")
input(type="imtcp" address="127.0.0.1" port="$TCP" ruleset="tcp")
input(type="imuxsock" socket="$R/log.sock" useSpecialParser="off" parseHostname="on" ruleset="unix")
EOF
rsyslogd -N1 -f "$R/rsyslog.conf" >"$R/check.out" 2>&1 && pass rsyslog/config-valid ||
	fail rsyslog/config-valid "$(cat "$R/check.out")"
rsyslogd -n -f "$R/rsyslog.conf" -i "$R/rsyslogd.pid" >"$R/rsyslogd.out" 2>&1 &
RS=$!
i=0
until [ -S "$R/log.sock" ] && [ -n "$(ss -Hltn "sport = :$TCP")" ] && [ -n "$(ss -Hlun "sport = :$UDP")" ]; do
	[ $i -ge 300 ] && break
	sleep 0.1; i=$((i + 1))
done
[ $i -lt 300 ] && pass rsyslog/listening || fail rsyslog/listening "$(cat "$R/rsyslogd.out"; ss -lntu)"

# The daemon with every kind of sink. The unix sink keeps the default facility
# authpriv (PRI 84 for a denial: authpriv.warning), the others use local3 (156).
cat >"$W/agent.json" <<EOF
{ "host": "e2e-sinks", "sinks": [
    { "type": "syslog", "target": "udp://127.0.0.1:$UDP", "facility": "local3" },
    { "type": "syslog", "target": "tcp://127.0.0.1:$TCP", "facility": "local3" },
    { "type": "syslog", "target": "unix://$R/log.sock" },
    { "type": "jsonl", "path": "$W/events.jsonl" },
    { "type": "jsonl", "path": "$W/ocsf.jsonl", "format": "ocsf" },
    { "type": "prometheus", "listen": "127.0.0.1:$PROM" } ] }
EOF
sbx-bpf daemon --config "$W/agent.json" 2>"$W/d.err" &
D=$!
wait_for "$PIN/meta" 600 && pass daemon/pinned || fail daemon/pinned "no $PIN/meta; $(cat "$W/d.err")"
sleep 1	# the TCP sink connects in the background; records wait in its queue meanwhile

# Three denials, each from a process whose pid we know.
echo "{ \"filesystem\": { \"denyRead\": [ \"$SECRET\" ] } }" >"$W/p.json"
sbx-bpf attach "$CG" --policy "$W/p.json" 2>"$W/a.err"
check attach/exit "$?" 0
for n in 1 2 3; do
	check "probe$n/denied" "$(probe $n 2>/dev/null)" EACCES
done
PID=$(cat "$W/pid1")
CGID=$(stat -c %i "$CG")
BOOT=$(cat /proc/sys/kernel/random/boot_id)
wait_grep "$W/events.jsonl" "\"pid\":$(cat "$W/pid3")" 300 || fail jsonl/arrived "$(cat "$W/d.err")"

# --- JSON lines ---------------------------------------------------------------------------
jq -c . "$W/events.jsonl" >/dev/null 2>"$W/jq.err" && pass jsonl/every-line-parses ||
	fail jsonl/every-line-parses "$(cat "$W/jq.err")"
SEQ=$(jq -r "select(.process.pid == $PID) | .seq" "$W/events.jsonl" | head -1)
case "$SEQ" in '' | *[!0-9]*) fail jsonl/seq "no record of pid $PID: $(head -c 600 "$W/events.jsonl")"; SEQ=0 ;; esac
check_json jsonl/fields "$W/events.jsonl" \
	"any(.[]; .schema == \"sbx-bpf.event/3\" and .type == \"violation\" and .verdict == \"denied\" and
	 .op == \"read\" and .path == \"$SECRET\" and .path2 == null and .net == null and .domain == null and
	 .rule == {\"id\": 0, \"text\": \"denyRead $SECRET\"} and .errno == 13 and
	 .path_unresolved == false and .moves_between_rules == false and
	 .cgroup_id == $CGID and .sandbox_cgroup_id == $CGID and
	 .process.pid == $PID and .process.tid == $PID and .process.uid == 0 and
	 .process.comm == \"sbx-probe\" and (.process.ppid | type) == \"number\" and
	 (.time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$\")) and (.ts_ns | type) == \"number\" and
	 .host == \"e2e-sinks\" and .boot_id == \"$BOOT\" and .seq == $SEQ)"
check_json jsonl/seq-counts-up "$W/events.jsonl" \
	"[.[] | select(.path == \"$SECRET\") | .seq] | (length == 3 and .[1] == .[0] + 1 and .[2] == .[1] + 1)"

# --- OCSF ------------------------------------------------------------------------------------
jq -c . "$W/ocsf.jsonl" >/dev/null 2>"$W/jq.err" && pass ocsf/every-line-parses ||
	fail ocsf/every-line-parses "$(cat "$W/jq.err")"
check_json ocsf/file-system-activity "$W/ocsf.jsonl" \
	"any(.[]; .actor.process.pid == $PID and .class_uid == 1001 and .class_name == \"File System Activity\" and
	 .category_uid == 1 and .category_name == \"System Activity\" and .activity_id == 2 and
	 .activity_name == \"Read\" and .type_uid == 100102 and (.time | type) == \"number\")"
check_json ocsf/denial "$W/ocsf.jsonl" \
	"any(.[]; .actor.process.pid == $PID and .action_id == 2 and .action == \"Denied\" and
	 .disposition_id == 2 and .disposition == \"Blocked\" and .status_id == 2 and .status == \"Failure\" and
	 .severity_id == 3 and .status_detail == \"denyRead $SECRET\" and
	 .firewall_rule == {\"name\": \"denyRead $SECRET\", \"uid\": \"0\"})"
check_json ocsf/metadata "$W/ocsf.jsonl" \
	"any(.[]; .actor.process.pid == $PID and .metadata.version == \"1.1.0\" and
	 .metadata.product.name == \"sbx-bpf\" and .metadata.product.vendor_name == \"sbx-bpf\" and
	 .metadata.sequence == $SEQ and .metadata.uid == \"$BOOT:$SEQ\" and .metadata.log_name == \"violation\" and
	 .metadata.profiles == [\"host\", \"security_control\"] and .device.hostname == \"e2e-sinks\")"
check_json ocsf/actor-file-unmapped "$W/ocsf.jsonl" \
	"any(.[]; .actor.process.pid == $PID and .actor.process.tid == $PID and .actor.process.name == \"sbx-probe\" and
	 .actor.process.user.uid == \"0\" and .actor.user.uid == \"0\" and
	 (.actor.process.parent_process.pid | type) == \"number\" and
	 .file.path == \"$SECRET\" and .file.name == \"secret\" and .file.parent_folder == \"$W/data\" and
	 .unmapped.schema == \"sbx-bpf.event/3\" and .unmapped.boot_id == \"$BOOT\" and .unmapped.op == \"read\" and
	 .unmapped.verdict == \"denied\" and .unmapped.errno == 13 and .unmapped.cgroup_id == $CGID and
	 .unmapped.sandbox_cgroup_id == $CGID)"

# --- syslog, as rsyslogd parsed it -------------------------------------------------------------
# check_syslog NAME FILE PRI: the record of $PID (by its seq) with its header and structured data,
# and every record of the three probes arrived.
check_syslog() {
	name=$1 file=$2 pri=$3
	wait_grep "$file" " seq=\"$((SEQ + 2))\" " 100
	line=$(grep -F " seq=\"$SEQ\" " "$file" | head -1)
	if [ -z "$line" ]; then
		fail "$name/received" "no seq=\"$SEQ\" in $file: $(head -c 600 "$file"); rsyslogd: $(cat "$R/rsyslogd.out")"
		return
	fi
	pass "$name/received"
	set -f
	# shellcheck disable=SC2086 # split into the header's fields
	set -- $line
	set +f
	check "$name/header" "$1 $2 $3 $4 $5 $6 $7" "1 $pri e2e-sinks sbx-bpf $D violation [sbx@32473"
	missing=
	for p in "seq=\"$SEQ\"" "boot_id=\"$BOOT\"" 'op="read"' 'verdict="denied"' "path=\"$SECRET\"" \
		"rule=\"denyRead $SECRET\"" 'rule_id="0"' 'errno="13"' "pid=\"$PID\"" "tid=\"$PID\"" \
		'uid="0"' 'comm="sbx-probe"' "cgroup_id=\"$CGID\"" "sandbox_cgroup_id=\"$CGID\""; do
		case "$line" in *" $p "* | *" $p]"*) ;; *) missing="$missing $p" ;; esac
	done
	echo "$line" | grep -qE ' ppid="[0-9]+"[] ]' || missing="$missing ppid"
	check "$name/structured-data" "${missing:-none}" none
	case "$line" in
	*"] denied read $SECRET (denyRead $SECRET) pid $PID sbx-probe") pass "$name/msg" ;;
	*) fail "$name/msg" "$line" ;;
	esac
	n=$(grep -c "^1 $pri e2e-sinks sbx-bpf $D violation \[sbx@32473 seq=\"[0-9]*\" .* path=\"$SECRET\"" "$file")
	check "$name/all-three" "$n" 3
}
check_syslog syslog-udp "$R/udp.log" 156
check_syslog syslog-tcp "$R/tcp.log" 156
check_syslog syslog-unix "$R/unix.log" 84

# --- Prometheus --------------------------------------------------------------------------------
curl -s -m 5 "http://127.0.0.1:$PROM/metrics" >"$W/metrics"
check prometheus/scraped "$?" 0
curl -s -m 5 "http://127.0.0.1:$PROM/metrics" | promtool check metrics >"$W/promtool.out" 2>&1
check prometheus/promtool-check-metrics "$?" 0
[ -s "$W/promtool.out" ] && fail prometheus/promtool-silent "$(head -c 600 "$W/promtool.out")" ||
	pass prometheus/promtool-silent
v=$(awk '$1 == "sbx_violations_total{op=\"read\",verdict=\"denied\"}" { print $2 }' "$W/metrics")
[ "${v:-0}" -ge 3 ] 2>/dev/null && pass prometheus/violations-read-denied ||
	fail prometheus/violations-read-denied "got '$v': $(grep sbx_violations_total "$W/metrics" | head -5)"
grep -q '^# TYPE sbx_violations_total counter$' "$W/metrics" && pass prometheus/violations-type ||
	fail prometheus/violations-type "$(head -c 400 "$W/metrics")"
v=$(awk '$1 == "sbx_policies" { print $2 }' "$W/metrics")
[ "${v:-0}" -ge 1 ] 2>/dev/null && pass prometheus/policies-gauge || fail prometheus/policies-gauge "got '$v'"

sbx-bpf detach "$CG"
kill "$D"; wait "$D" 2>/dev/null
kill "$RS"; wait "$RS" 2>/dev/null
rmdir "$CG" 2>/dev/null
