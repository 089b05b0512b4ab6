# The enforcement object's .bss as `bpftool btf dump file sbx.bpf.o format raw`
# prints it, made into C for the extension object (bpf/shared.bpf.c), which
# reads that very map: each variable's offset and size, and the section's
# size. No .bss, or no variable in it: exit 1, and the build stops.
/^\[/ {
	sec = $2 == "DATASEC" && $3 == "'.bss'"
	for (i = 4; sec && i <= NF; i++)
		if ($i ~ /^size=/) {
			size = substr($i, 6)
			found = 1
		}
	next
}
sec && /\(VAR '/ {
	name = $NF
	gsub(/[')]/, "", name)
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^offset=/)
			off = substr($i, 8)
		if ($i ~ /^size=/)
			sz = substr($i, 6)
	}
	printf "#define SBX_BSS_OFF_%s %s\n#define SBX_BSS_SIZE_%s %s\n", name, off, name, sz
	vars++
}
END {
	if (!found || !vars)
		exit 1
	printf "#define SBX_BSS_SIZE %s\n", size
}
