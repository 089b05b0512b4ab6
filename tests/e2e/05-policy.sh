# Policy files as `run` uses them: the built-in agent-default preset, ~ and
# SUDO_USER, relative paths, symlinked rule paths, any-depth patterns, an srt
# settings file with keys that mean nothing here, and bad files (exit 2,
# FILE:LINE:COL, nothing started, no cgroup left).
. /sbx/tests/e2e/lib.sh

WK=$W/work
mkdir -p "$WK/sub/deep/er" /root/.ssh /root/.aws "$W/real-secrets" /home/alice/.ssh
echo key >/root/.ssh/id_ed25519
echo alice-key >/home/alice/.ssh/id_rsa
echo s >"$W/real-secrets/token"
ln -s "$W/real-secrets" "$W/link-to-secrets"
echo x >"$WK/sub/deep/er/.env"
grep -q '^alice:' /etc/passwd || echo 'alice:x:1000:1000::/home/alice:/bin/sh' >>/etc/passwd
cd "$WK"

# No --policy: agent-default. Credentials denied with the preset's rule text,
# the working directory and /tmp writable, elsewhere not, /dev/null fine.
out=$(sbx-bpf run --events "$W/ev-def.json" -- sh -c "
	sbx-probe open /root/.ssh/id_ed25519; sbx-probe open $WK/new creat; sbx-probe open /tmp/p-new creat
	sbx-probe open /etc/sbx-new creat; sbx-probe open /dev/null w; sbx-probe open /etc/hostname" \
	2>/dev/null | tr '\n' ' ')
check default/answers "$out" "EACCES OK OK EACCES OK OK "
check_json default/ssh-event "$W/ev-def.json" \
	'map(select(.op == "read" and .path == "/root/.ssh/id_ed25519")) | length == 1 and .[0].rule.text == "denyRead ~/.ssh"'
check_json default/etc-write-event "$W/ev-def.json" \
	'map(select(.op == "create" and .path == "/etc/sbx-new")) | length == 1 and .[0].rule.id == null'
[ ! -e /etc/sbx-new ] && pass default/no-file-in-etc || fail default/no-file-in-etc exists

# SUDO_USER: ~ is the invoking user's home, not root's.
out=$(SUDO_USER=alice sbx-bpf run --events "$W/ev-sudo.json" -- sh -c \
	"sbx-probe open /home/alice/.ssh/id_rsa; sbx-probe open /root/.ssh/id_ed25519" 2>/dev/null | tr '\n' ' ')
check sudo-user/home-is-alices "$out" "EACCES OK "
check_json sudo-user/event "$W/ev-sudo.json" 'length == 1 and .[0].path == "/home/alice/.ssh/id_rsa"'

# Relative paths (from the working directory), a symlinked rule path (protects
# the target), an any-depth pattern, ~ in a policy file.
cat >"$W/p1.json" <<EOF
{
  "filesystem": {
    "denyRead": ["$W/link-to-secrets", "**/.env", "~/.aws"],
    "allowWrite": ["sub/deep"],
    "denyWrite": ["./sub/deep/er/**"]
  }
}
EOF
echo x >/root/.aws/credentials
out=$(sbx-bpf run --policy "$W/p1.json" --events "$W/ev-p1.json" -- sh -c "
	sbx-probe open $W/real-secrets/token; sbx-probe open $WK/sub/deep/er/.env
	sbx-probe open $WK/sub/deep/f creat; sbx-probe open $WK/sub/deep/er/f creat
	sbx-probe open $WK/f creat; sbx-probe open /root/.aws/credentials" 2>/dev/null | tr '\n' ' ')
check policy-file/answers "$out" "EACCES EACCES OK EACCES EACCES EACCES "
check_json policy-file/symlink-rule-protects-target "$W/ev-p1.json" \
	"map(select(.path == \"$W/real-secrets/token\")) | length == 1 and .[0].rule.text == \"denyRead $W/link-to-secrets\""
check_json policy-file/any-depth "$W/ev-p1.json" \
	"map(select(.path == \"$WK/sub/deep/er/.env\")) | length == 1 and .[0].rule.text == \"denyRead **/.env\""
check_json policy-file/relative-deny-write "$W/ev-p1.json" \
	"map(select(.path == \"$WK/sub/deep/er/f\")) | length == 1 and .[0].rule.text == \"denyWrite ./sub/deep/er/**\""
check_json policy-file/tilde "$W/ev-p1.json" \
	'map(select(.path == "/root/.aws/credentials")) | length == 1 and .[0].rule.text == "denyRead ~/.aws"'

# An srt settings file with keys that mean nothing here: one warning each, runs.
cat >"$W/srt.json" <<EOF
{
  "network": { "allowedDomains": ["github.com"], "httpProxyPort": 8080 },
  "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": ["."] },
  "ignoreViolations": {},
  "enableWeakerNestedSandbox": false
}
EOF
out=$(sbx-bpf run --policy "$W/srt.json" -- sbx-probe open /root/.ssh/id_ed25519 2>"$W/err-srt")
check srt/enforced "$out" EACCES
check srt/three-warnings "$(grep -c "warning: .*ignoring" "$W/err-srt")" 3
grep -q "srt.json:2:.*httpProxyPort" "$W/err-srt" && pass srt/warning-names-key ||
	fail srt/warning-names-key "$(cat "$W/err-srt")"

# Bad files: exit 2, FILE:LINE:COL, the command never runs, no cgroup left.
printf '{\n  "filesystem": {\n    "denyRaed": ["/x"]\n  }\n}\n' >"$W/bad1.json"
printf '{\n  "filesystem": { "denyRead": ["/a/*.key"] }\n}\n' >"$W/bad2.json"
printf '{\n  "filesystem": { "denyRead": "/x" }\n}\n' >"$W/bad3.json"
printf '{ "filesystem": { "denyRead": ["/x"] ' >"$W/bad4.json"
for i in 1 2 3 4; do
	rm -f "$W/ran"
	sbx-bpf run --name e2e-bad --policy "$W/bad$i.json" -- touch "$W/ran" 2>"$W/err-bad$i"
	check "bad$i/exit-2" "$?" 2
	[ ! -e "$W/ran" ] && pass "bad$i/not-started" || fail "bad$i/not-started" "command ran"
	[ ! -e /sys/fs/cgroup/sbx-bpf/e2e-bad ] && pass "bad$i/no-cgroup" || fail "bad$i/no-cgroup" left
done
grep -q "bad1.json:3:5: .*denyRaed.*did you mean 'denyRead'" "$W/err-bad1" && pass bad1/message ||
	fail bad1/message "$(cat "$W/err-bad1")"
grep -q "bad2.json:2:32: " "$W/err-bad2" && pass bad2/message || fail bad2/message "$(cat "$W/err-bad2")"
grep -q "bad3.json:2:31: .*must be an array" "$W/err-bad3" && pass bad3/message || fail bad3/message "$(cat "$W/err-bad3")"
grep -q "bad4.json:1:" "$W/err-bad4" && pass bad4/message || fail bad4/message "$(cat "$W/err-bad4")"
