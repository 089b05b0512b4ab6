. /sbx/tests/e2e/lib.sh
sbx-bpf -v run -- true >/tmp/dbg.log 2>&1
grep -n "BEGIN PROG LOAD LOG\|END PROG LOAD LOG\|failed to load\|prog '" /tmp/dbg.log | head -20
awk '/END PROG LOAD LOG/ { exit } { buf[NR % 40] = $0; n = NR } END { for (i = n - 39; i <= n; i++) if (i > 0) print buf[i % 40] }' /tmp/dbg.log
exit 1
