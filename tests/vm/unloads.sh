# The children that hold a finished daemon-less run's links until they go
# (userspace/run.c unload_later, util.c hold_until_exit): sourced by the
# VM's init, tests/e2e/lib.sh and bench/lib.sh, which each wait for them.

# Their pids, zombies left out.
unload_pids() {
	sed -n 's/^\([0-9]*\) (sbx-bpf-unload) [^Z].*/\1/p' /proc/[0-9]*/stat 2>/dev/null
}

# Wait up to $1 tenths of a second for every such child to be gone; 1 if one stays.
wait_unloads() {
	_i=0
	while [ -n "$(unload_pids)" ]; do
		[ $_i -lt "$1" ] || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}
