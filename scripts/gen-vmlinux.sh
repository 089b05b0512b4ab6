#!/usr/bin/env bash
# Regenerate vmlinux/vmlinux.h from a kernel's BTF.
#   scripts/gen-vmlinux.sh [BTF]    default BTF: /sys/kernel/btf/vmlinux (the running kernel)
# CO-RE relocations make the header portable across kernels: the programs are
# fixed up at load time against the target kernel's own BTF, so one committed
# copy serves 6.1 and 6.12 alike. The file is rewritten only when it changes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BTF=${1:-/sys/kernel/btf/vmlinux}
[ -r "$BTF" ] || { echo "gen-vmlinux: cannot read BTF at '$BTF'" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
bpftool btf dump file "$BTF" format c >"$tmp"
if cmp -s "$tmp" "$ROOT/vmlinux/vmlinux.h"; then
	echo "gen-vmlinux: vmlinux/vmlinux.h unchanged"
else
	mv "$tmp" "$ROOT/vmlinux/vmlinux.h"
	trap - EXIT
	echo "gen-vmlinux: vmlinux/vmlinux.h regenerated from $BTF"
fi
