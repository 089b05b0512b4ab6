#!/usr/bin/env bash
# The deployment files: packaging/sbx-bpf.service (systemd-analyze verify, the
# settings docs/deploy.md relies on, its ExecStart against the real binary),
# deploy/daemonset.yaml (parsed with PyYAML: host PID, mounts, propagation,
# capabilities, probes, the agent config) and packaging/Containerfile.
# Prints one "PASS name" / "FAIL name: why" line per check; a check whose tool
# is missing prints "SKIP name: why" (not counted).
# DEPLOY_UNIT, DEPLOY_DAEMONSET, DEPLOY_CONTAINERFILE point the checks at other
# files (to see them fail on a broken copy).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$ROOT/build}/sbx-bpf
T=deploy
UNIT=${DEPLOY_UNIT:-$ROOT/packaging/sbx-bpf.service}
DS=${DEPLOY_DAEMONSET:-$ROOT/deploy/daemonset.yaml}
CF=${DEPLOY_CONTAINERFILE:-$ROOT/packaging/Containerfile}
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
skip() { echo "SKIP $T/$1: $2"; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

# --- systemd unit -----------------------------------------------------------------------

# Values of KEY= in the unit, one per line (it has no line continuations).
unit_get() { sed -n "s/^$1=//p" "$UNIT"; }
# $1 name, $2 key, $3 wanted value (the last assignment wins, as in systemd)
unit_is() {
	local got
	got=$(unit_get "$2" | tail -1)
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1" "$2='$got', want '$3'"; fi
}

EXEC=$(unit_get ExecStart | tail -1)
EXEC_BIN=${EXEC%% *}
EXEC_ARGS=${EXEC#"$EXEC_BIN"}

if ! command -v systemd-analyze >/dev/null; then
	skip unit-verify "no systemd-analyze"
else
	# verify insists that ExecStart= names an executable: point it at the built
	# binary (or a stand-in) in a copy. Nothing is started.
	real=$B
	if [ ! -x "$real" ]; then
		real=$W/bin/sbx-bpf
		mkdir -p "$W/bin" && printf '#!/bin/sh\n' >"$real" && chmod +x "$real"
	fi
	mkdir -p "$W/unit" "$W/broken"
	sed "s#$EXEC_BIN#$real#g" "$UNIT" >"$W/unit/sbx-bpf.service"
	# Only lines about our unit count: dependencies (multi-user.target…) are the host's.
	out=$(systemd-analyze verify --man=no --generators=no "$W/unit/sbx-bpf.service" 2>&1)
	rc=$?
	mine=$(grep 'sbx-bpf' <<<"$out")
	if [ $rc -eq 0 ] && [ -z "$mine" ]; then pass unit-verify; else
		fail unit-verify "status $rc: ${mine:-$out}"; fi
	# … and verify does report a broken unit here (else the check above proves nothing).
	sed 's/^KillMode=.*/KillMode=sometimes\nNoSuchSetting=1/' "$W/unit/sbx-bpf.service" \
		>"$W/broken/sbx-bpf.service"
	out=$(systemd-analyze verify --man=no --generators=no "$W/broken/sbx-bpf.service" 2>&1)
	if grep -q 'NoSuchSetting' <<<"$out" && grep -q 'sometimes' <<<"$out"; then
		pass unit-verify-reports-errors
	else
		fail unit-verify-reports-errors "no warning for an unknown key and a bad KillMode: $out"
	fi
fi

# The capability set docs/deploy.md argues for, nothing more; systemd ignores
# names it does not know, so ask it about each one.
CAPS=$(unit_get CapabilityBoundingSet | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
if [ "$CAPS" = "CAP_BPF CAP_NET_ADMIN CAP_PERFMON " ]; then pass unit-capabilities; else
	fail unit-capabilities "CapabilityBoundingSet='$CAPS', want CAP_BPF CAP_NET_ADMIN CAP_PERFMON"; fi
if command -v systemd-analyze >/dev/null && systemd-analyze capability 2>/dev/null | grep -q .; then
	# shellcheck disable=SC2086
	if out=$(systemd-analyze capability $CAPS 2>&1); then pass unit-capabilities-known; else
		fail unit-capabilities-known "$out"; fi
else
	skip unit-capabilities-known "no 'systemd-analyze capability'"
fi

unit_is unit-restart-always Restart always
unit_is unit-killmode-mixed KillMode mixed
unit_is unit-delegate Delegate yes
unit_is unit-protect-system ProtectSystem strict
unit_is unit-memlock LimitMEMLOCK infinity
unit_is unit-logs-directory LogsDirectory sbx-bpf
unit_is unit-runtime-preserved RuntimeDirectoryPreserve yes
unit_is unit-asserts-bpffs AssertPathIsMountPoint /sys/fs/bpf
rw=" $(unit_get ReadWritePaths | tr '\n' ' ') "
for p in /sys/fs/bpf /sys/fs/cgroup; do
	case "$rw" in
	*" $p "*) pass "unit-writable-$(basename "$p")" ;;
	*) fail "unit-writable-$(basename "$p")" "ReadWritePaths='$rw' lacks $p" ;;
	esac
done
# Stopping or restarting must never remove enforcement.
bad=$(grep -E '^-?Exec[A-Za-z]*=' "$UNIT" | grep -w unload)
if [ -z "$bad" ]; then pass unit-never-unloads; else fail unit-never-unloads "$bad"; fi
# ExecStart's options are ones the binary accepts ('--help' last: the options
# before it are parsed, an unknown one exits 2, nothing is started).
if [ "$EXEC_BIN" != /usr/local/bin/sbx-bpf ]; then
	fail unit-execstart-path "ExecStart runs '$EXEC_BIN', docs say /usr/local/bin/sbx-bpf"
else
	pass unit-execstart-path
fi
# shellcheck disable=SC2086
if out=$("$B" $EXEC_ARGS --help 2>&1 >/dev/null); then pass unit-execstart-options; else
	fail unit-execstart-options "'sbx-bpf$EXEC_ARGS' is refused: $out"; fi

# --- Containerfile ------------------------------------------------------------------------

if grep -Eq '^COPY +build/sbx-bpf +/usr/local/bin/sbx-bpf *$' "$CF"; then
	pass containerfile-copies-binary
else
	fail containerfile-copies-binary "no 'COPY build/sbx-bpf /usr/local/bin/sbx-bpf' in $CF"
fi
if grep -Eq '^ENTRYPOINT +\["/usr/local/bin/sbx-bpf"\] *$' "$CF"; then
	pass containerfile-entrypoint
else
	fail containerfile-entrypoint "no 'ENTRYPOINT [\"/usr/local/bin/sbx-bpf\"]' in $CF"
fi
# The DaemonSet's init container runs /bin/sh from this image.
from=$(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' "$CF" | tail -1)
if [ -n "$from" ] && [ "$from" != scratch ]; then pass containerfile-has-shell; else
	fail containerfile-has-shell "FROM '${from:-none}': the init container needs /bin/sh and mount(8)"; fi

# --- DaemonSet --------------------------------------------------------------------------

if ! python3 -c 'import yaml' 2>/dev/null; then
	skip daemonset "python3 with PyYAML (Debian: python3-yaml) not found"
	exit 0
fi

# The unit's capabilities (without CAP_) for a cross-check; the script's last
# line is "ARGS …", the agent container's arguments.
out=$(python3 - "$DS" "${CAPS//CAP_/}" 2>&1 <<'EOF'
import json, sys, yaml

T = "deploy"
path, unit_caps = sys.argv[1], set(sys.argv[2].split())
failed = False

def check(name, ok, why=""):
    global failed
    print(f"PASS {T}/{name}" if ok else f"FAIL {T}/{name}: {why}")
    failed |= not ok

try:
    text = open(path).read()
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
except Exception as e:          # not YAML at all: nothing else can be checked
    check("daemonset-yaml", False, f"{path}: {e}")
    sys.exit(0)
check("daemonset-yaml", True)

kinds = [d.get("kind") for d in docs]
check("daemonset-objects", kinds == ["Namespace", "ConfigMap", "DaemonSet"], f"kinds {kinds}")
by_kind = {d.get("kind"): d for d in docs}
ns = by_kind.get("Namespace", {})
cm = by_kind.get("ConfigMap", {})
ds = by_kind.get("DaemonSet", {})

def get(obj, *keys, default=None):
    for k in keys:
        if isinstance(obj, dict) and k in obj:
            obj = obj[k]
        elif isinstance(obj, list) and isinstance(k, int) and k < len(obj):
            obj = obj[k]
        else:
            return default
    return obj

check("daemonset-namespace",
      get(ns, "metadata", "name") == "sbx-system"
      and get(cm, "metadata", "namespace") == "sbx-system"
      and get(ds, "metadata", "namespace") == "sbx-system",
      "Namespace, ConfigMap and DaemonSet must all be sbx-system")
check("daemonset-pod-security",
      get(ns, "metadata", "labels", "pod-security.kubernetes.io/enforce") == "privileged",
      "namespace lacks pod-security.kubernetes.io/enforce: privileged")
check("daemonset-api", ds.get("apiVersion") == "apps/v1", f"apiVersion {ds.get('apiVersion')}")

pod = get(ds, "spec", "template", "spec", default={})
sel = get(ds, "spec", "selector", "matchLabels", default={})
labels = get(ds, "spec", "template", "metadata", "labels", default={})
check("daemonset-selector", bool(sel) and all(labels.get(k) == v for k, v in sel.items()),
      f"selector {sel} does not match the template's labels {labels}")
check("daemonset-hostpid", pod.get("hostPID") is True, f"hostPID is {pod.get('hostPID')!r}")
check("daemonset-no-api-token", pod.get("automountServiceAccountToken") is False,
      "automountServiceAccountToken should be false")
tol = pod.get("tolerations") or []
check("daemonset-tolerates-all",
      any(t.get("operator") == "Exists" and "key" not in t and "effect" not in t for t in tol),
      f"no catch-all toleration in {tol}")

containers = pod.get("containers") or []
inits = pod.get("initContainers") or []
main = next((c for c in containers if c.get("name") == "sbx-bpf"), {})
check("daemonset-container", bool(main), "no container named sbx-bpf")

# Field names of the parts we use, to catch a misspelt key (Kubernetes would
# reject or, worse, drop it).
known = {
    "container": {"name", "image", "command", "args", "env", "securityContext", "ports",
                  "livenessProbe", "readinessProbe", "startupProbe", "resources",
                  "volumeMounts", "terminationMessagePolicy", "imagePullPolicy"},
    "securityContext": {"privileged", "runAsUser", "runAsGroup", "runAsNonRoot",
                        "allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities",
                        "seccompProfile", "appArmorProfile", "seLinuxOptions", "procMount"},
    "volumeMount": {"name", "mountPath", "readOnly", "mountPropagation", "subPath",
                    "recursiveReadOnly"},
    "probe": {"httpGet", "exec", "tcpSocket", "grpc", "initialDelaySeconds", "periodSeconds",
              "timeoutSeconds", "failureThreshold", "successThreshold",
              "terminationGracePeriodSeconds"},
    "volume": {"name", "hostPath", "configMap", "emptyDir"},
}
bad = []
for c in containers + inits:
    bad += [f"{c.get('name')}.{k}" for k in c if k not in known["container"]]
    bad += [f"{c.get('name')}.securityContext.{k}" for k in (c.get("securityContext") or {})
            if k not in known["securityContext"]]
    for m in c.get("volumeMounts") or []:
        bad += [f"{c.get('name')}.volumeMounts.{k}" for k in m if k not in known["volumeMount"]]
    for p in ("livenessProbe", "readinessProbe", "startupProbe"):
        bad += [f"{c.get('name')}.{p}.{k}" for k in (c.get(p) or {}) if k not in known["probe"]]
for v in pod.get("volumes") or []:
    bad += [f"volumes.{v.get('name')}.{k}" for k in v if k not in known["volume"]]
check("daemonset-field-names", not bad, f"unknown fields: {bad}")

sc = main.get("securityContext") or {}
caps = sc.get("capabilities") or {}
add = set(caps.get("add") or [])
check("daemonset-not-privileged", sc.get("privileged") is False,
      f"privileged is {sc.get('privileged')!r}")
check("daemonset-drops-all", caps.get("drop") == ["ALL"], f"drop {caps.get('drop')}")
check("daemonset-capabilities", add == {"BPF", "PERFMON", "NET_ADMIN"}, f"add {sorted(add)}")
check("daemonset-capabilities-match-unit", add == unit_caps,
      f"DaemonSet adds {sorted(add)}, the systemd unit keeps {sorted(unit_caps)}")
# API validation: no_new_privs cannot be combined with CAP_SYS_ADMIN.
check("daemonset-no-escalation",
      sc.get("allowPrivilegeEscalation") is False and "SYS_ADMIN" not in add,
      "allowPrivilegeEscalation must be false (and then SYS_ADMIN cannot be added)")

volumes = {v.get("name"): v for v in pod.get("volumes") or []}
def host_path(mount):
    return get(volumes.get(mount.get("name"), {}), "hostPath", "path")
mounts = {m.get("mountPath"): m for m in main.get("volumeMounts") or []}
for p in ["/sys/fs/bpf", "/sys/fs/cgroup", "/sys/kernel/btf", "/var/log/sbx-bpf", "/run/sbx-bpf"]:
    m = mounts.get(p)
    check("daemonset-mount" + p.replace("/", "-"), m is not None and host_path(m) == p,
          f"the agent does not mount the host's {p} at {p}")
check("daemonset-btf-read-only", (mounts.get("/sys/kernel/btf") or {}).get("readOnly") is True,
      "/sys/kernel/btf should be readOnly")

# Pins must reach the host's bpffs: a mount of it with Bidirectional
# propagation (made by a container that may mount it) and the agent receiving
# host mounts. Kubernetes allows Bidirectional only in privileged containers.
def bpffs_mounts(cs):
    return [(c, m) for c in cs for m in c.get("volumeMounts") or []
            if m.get("mountPath") == "/sys/fs/bpf" and host_path(m) == "/sys/fs/bpf"]
check("daemonset-bpffs-bidirectional",
      any(m.get("mountPropagation") == "Bidirectional" for _, m in bpffs_mounts(inits + containers)),
      "no container mounts the host's /sys/fs/bpf with mountPropagation: Bidirectional")
check("daemonset-agent-sees-host-bpffs",
      get(mounts, "/sys/fs/bpf", "mountPropagation") in ("HostToContainer", "Bidirectional"),
      "the agent's /sys/fs/bpf mount does not receive host mounts")
wrong = [c.get("name") for c in inits + containers for m in c.get("volumeMounts") or []
         if m.get("mountPropagation") == "Bidirectional"
         and get(c, "securityContext", "privileged") is not True]
check("daemonset-bidirectional-only-privileged", not wrong,
      f"Bidirectional in unprivileged containers {wrong} (the API server refuses it)")

# Requests and limits everywhere.
norsrc = [c.get("name") for c in inits + containers
          if not all(get(c, "resources", s, r) for s in ("requests", "limits") for r in ("cpu", "memory"))]
check("daemonset-resources", not norsrc, f"no cpu/memory requests and limits: {norsrc}")

# Every image is the one placeholder, marked as such in the text.
images = {c.get("image") for c in inits + containers}
check("daemonset-image-placeholder", images == {"ghcr.io/OWNER/sbx-bpf:VERSION"}
      and all("PLACEHOLDER" in l for l in text.splitlines() if "image:" in l),
      f"images {images}; each 'image:' line must say PLACEHOLDER")

# The agent configuration: mounted from the ConfigMap where args say, with a
# JSON lines sink in the logs mount and the prometheus sink the probe checks.
args = main.get("args") or []
cfg_path = args[args.index("--config") + 1] if "--config" in args[:-1] else None
cfg_dir, _, cfg_key = (cfg_path or "").rpartition("/")
cfg_mount = mounts.get(cfg_dir) or {}
cfg_vol = volumes.get(cfg_mount.get("name"), {})
check("daemonset-config-mounted",
      cfg_path is not None and get(cfg_vol, "configMap", "name") == get(cm, "metadata", "name")
      and cfg_key in (cm.get("data") or {}),
      f"args {args}: --config FILE must be a key of ConfigMap {get(cm, 'metadata', 'name')} mounted at its directory")
try:
    conf = json.loads((cm.get("data") or {}).get(cfg_key, ""))
    sinks = conf.get("sinks") or []
    check("daemonset-config-json", True)
except Exception as e:
    conf, sinks = {}, []
    check("daemonset-config-json", False, f"{cfg_key}: {e}")
jsonl = [s for s in sinks if s.get("type") == "jsonl"]
check("daemonset-config-events-on-host",
      any(s.get("path", "").startswith("/var/log/sbx-bpf/") for s in jsonl),
      f"no jsonl sink writing below /var/log/sbx-bpf/: {jsonl}")
prom = [s for s in sinks if s.get("type") == "prometheus"]
listen = prom[0].get("listen", "") if prom else ""
host, _, port = listen.rpartition(":")

live = main.get("livenessProbe") or {}
lport = get(live, "httpGet", "port")
ports = {p.get("name"): p.get("containerPort") for p in main.get("ports") or []}
lport = ports.get(lport, lport)
check("daemonset-liveness-metrics",
      get(live, "httpGet", "path") == "/metrics" and str(lport) == port and port == "9464",
      f"liveness probe {live} must GET /metrics on the prometheus sink's port ({listen or 'no sink'})")
# The kubelet probes the pod IP: a sink on the pod's loopback is unreachable.
check("daemonset-metrics-reachable", host not in ("127.0.0.1", "[::1]", "localhost") and bool(host),
      f"prometheus listens on '{listen}', which the kubelet cannot reach")
ready = get(main, "readinessProbe", "exec", "command") or []
check("daemonset-readiness-binary", ready[:1] == ["/usr/local/bin/sbx-bpf"],
      f"readiness probe {ready} must run the image's /usr/local/bin/sbx-bpf")
print("ARGS " + " ".join(args))
EOF
)
rc=$?
grep -v '^ARGS ' <<<"$out"
[ $rc -eq 0 ] || fail daemonset-script "python exited with status $rc"
# The agent's arguments against the binary, as for ExecStart. The DaemonSet
# is written for 'daemon --config', which the daemon does not have yet.
args=$(sed -n 's/^ARGS //p' <<<"$out")
# shellcheck disable=SC2086
if err=$("$B" $args --help 2>&1 >/dev/null); then
	pass daemonset-args-options
elif [[ " $args " == *" --config "* ]] && ! "$B" daemon --help 2>/dev/null | grep -q -- --config; then
	skip daemonset-args-options "'sbx-bpf daemon' has no --config yet"
else
	fail daemonset-args-options "'sbx-bpf $args' is refused: $err"
fi
