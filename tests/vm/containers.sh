# Helpers for the container tests and demo (sourced): a small image and podman as the VM can run it.

# container_rootfs DIR: busybox (with its libraries), sbx-probe, a key in root's home.
container_rootfs() {
	r=$1
	mkdir -p "$r/bin" "$r/root/.ssh" "$r/tmp" "$r/work" "$r/proc" "$r/dev" "$r/sys" "$r/etc"
	cp "$(command -v busybox)" "$r/bin/busybox"
	for lib in $(ldd "$(command -v busybox)" 2>/dev/null | grep -o '/[^ ]*'); do
		mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib"
	done
	for a in sh sleep cat echo ls; do ln -sf busybox "$r/bin/$a"; done
	cp "$(command -v sbx-probe)" "$r/bin/sbx-probe"
	echo "-----BEGIN OPENSSH PRIVATE KEY----- (a container's key)" >"$r/root/.ssh/id_rsa"
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/etc/passwd"
	chmod 1777 "$r/tmp"
}

# podman_setup DIR ROOTFS IMAGE: podman as the VM can run it, with sbx-bpf's hooks.d; sets $P.
# The VM has no systemd (cgroupfs, events to a file), and its root is the initramfs, which
# pivot_root cannot leave (no_pivot_root: the engine moves the container's root over / and
# chroots; paths inside are the same). Images go to a tmpfs (vfs: no overlay on tmpfs needed).
podman_setup() {
	d=$1
	mkdir -p "$d/hooks.d" /var/lib/containers
	mountpoint -q /var/lib/containers || mount -t tmpfs tmpfs /var/lib/containers
	for f in /sbx/packaging/oci-hooks.d/*.json; do
		jq --arg sbx "$(command -v sbx-bpf)" '.hook.path = $sbx' "$f" >"$d/hooks.d/$(basename "$f")"
	done
	printf '[engine]\nno_pivot_root = true\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' \
		>"$d/containers.conf"
	export CONTAINERS_CONF="$d/containers.conf"
	P="podman --storage-driver vfs --hooks-dir $d/hooks.d"
	tar -C "$2" -cf "$d/img.tar" .
	$P import "$d/img.tar" "$3" >/dev/null 2>"$d/import.err"
}
