#!/usr/bin/env bash
# Install exactly what building and testing sbx-bpf needs, on Debian 12.
# Idempotent: packages already present are not touched, and apt is not even
# consulted when nothing is missing (so a cached machine pays ~0.1 s).
set -euo pipefail

PKGS=(
	# build
	make gcc pkg-config clang-19 llvm-19 bpftool libbpf-dev libelf-dev
	zlib1g-dev libzstd-dev libjansson-dev
	# host unit tests; libFuzzer and clang's sanitizer runtimes for tests/fuzz
	libcmocka-dev jq libclang-rt-19-dev
	# tests/host/deploy.sh parses the Kubernetes manifest
	python3-yaml
	# VM test rig
	qemu-system-x86 debootstrap cpio busybox-static kmod
	# the kernels' BTF, out of their packaged vmlinuz (xz or zstd)
	xz-utils zstd
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$p")
	fi
done

[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}" >&2
# A third-party source that is down must not stop us: Debian's lists are what we need.
$SUDO apt-get update -qq || echo "install-deps: apt-get update reported errors (continuing)" >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
