#!/usr/bin/env bash
# `run`'s network flags with the real binary: they are checked as the policy
# file's network entries are, before anything is loaded or created, so a bad
# value exits 2 naming the flag and the value on any host, root or not.
# Prints one "PASS name" / "FAIL name: why" line per check.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$ROOT/build}/sbx-bpf
T=runflags
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
has() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "no '$3' in: $(head -c 400 "$2")"; fi; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

# bad NAME FLAG VALUE MESSAGE: exit 2, the message, and the command never ran.
bad() {
	"$B" run "$2" "$3" -- touch "$W/started" >out 2>err; check "$1-exit-2" "$?" 2
	has "$1-message" err "sbx-bpf: error: $2: $4"
	[ ! -e "$W/started" ] && pass "$1-starts-nothing" || fail "$1-starts-nothing" "the command ran"
	rm -f "$W/started"
}
bad allow-net-bits --allow-net 10.0.0.1/8 \
	"'10.0.0.1/8': address bits set beyond the /8 prefix (did you mean '10.0.0.0/8'?)"
bad deny-net-port --deny-net 10.0.0.0/8:0 "'10.0.0.0/8:0': bad port '0' (1-65535, or LO-HI)"
bad allow-net-v6-port --allow-net 2001:db8::/32:443 "'2001:db8::/32:443': prefix length must be 0-128"
bad allow-domain-broad --allow-domain '*.com' \
	"'*.com' is not a domain pattern: use 'example.com' or '*.example.com', optionally with ':PORT'; '*.com' or '*' is too broad"
bad deny-domain-url --deny-domain https://x.example.com \
	"'https://x.example.com' is not a domain pattern: use 'example.com' or '*.example.com', optionally with ':PORT', or '*'"
bad allow-unix-glob --allow-unix '**/docker.sock' "'**/docker.sock': unsupported glob '*'"
bad allow-domain-empty --allow-domain '' "empty value"

"$B" --json run --allow-net 10.0.0.1/8 -- true >out 2>/dev/null; check json-exit-2 "$?" 2
jq -e '.error | startswith("--allow-net: '\''10.0.0.1/8'\'': address bits set")' out >/dev/null &&
	pass json-error || fail json-error "$(cat out)"

# Good values get past the policy: whatever run does next on this host, it is not a usage error.
"$B" run --allow-domain github.com --allow-domain '*.npmjs.org:443' --deny-domain '*' \
	--allow-net 10.0.0.0/8:443 --deny-net '[::/0]:22' --allow-unix /nonexistent-sbx/s.sock \
	--allow-loopback --allow-local-binding --allow-all-unix-sockets --allow-raw-sockets \
	-- true >out 2>err
rc=$?
[ "$rc" != 2 ] && pass good-values-accepted || fail good-values-accepted "exit 2: $(cat err)"
has good-values-warn-as-file err "sbx-bpf: warning: --deny-net: '[::/0]:22' also covers every IPv4 address"
if grep -q -- "error: --" err; then fail good-values-no-flag-error "$(cat err)"; else pass good-values-no-flag-error; fi

# A flag adds to the policy file's network section: it warns against the file's entry.
printf '{\n  "network": {"allowedDomains": ["a.example.com:443"]}\n}\n' >p.json
"$B" run --policy p.json --allow-domain a.example.com:80 -- true >out 2>err
has adds-to-file err "sbx-bpf: warning: --allow-domain: 'a.example.com:80': the name is already allowed by 'allowedDomains a.example.com:443' (p.json:2:34), whose ports count"
"$B" run --deny-domain evil.example.org:22 -- true >out 2>err
has deny-domain-port-warning err "sbx-bpf: warning: --deny-domain: 'evil.example.org:22': a denied name is denied on every port, not only 22"

# Flags compile for the kernel as file entries do: too many port ranges for one prefix.
args=()
for i in $(seq 1 2 41); do args+=(--allow-net "10.0.0.0/8:$i"); done
"$B" run "${args[@]}" -- true >out 2>err; check port-ranges-exit-2 "$?" 2
has port-ranges-message err "sbx-bpf: error: 10.0.0.0/8: needs 21 port ranges, at most 16 (--allow-net)"

# The booleans take no value; the others need one.
"$B" run --allow-loopback=yes -- true >/dev/null 2>err; check bool-with-value-exit-2 "$?" 2
has bool-with-value-message err "'--allow-loopback' doesn't allow an argument"
"$B" run --allow-net >/dev/null 2>err; check missing-value-exit-2 "$?" 2
has missing-value-message err "'--allow-net' requires an argument"

"$B" run --help >out
has help-network-group out "Network (each flag adds to the policy's network section"
for f in --allow-domain --deny-domain --allow-net --deny-net --allow-unix --allow-loopback \
	--allow-local-binding --allow-all-unix-sockets --allow-raw-sockets; do
	grep -q -- "^  $f " out && pass "help$f" || fail "help$f" "not listed"
done
exit 0
