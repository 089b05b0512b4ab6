# The type names of our BPF objects, as `bpftool btf dump file X.bpf.o format raw`
# prints them, made into C for the loader (userspace/corebtf.h): every type a CO-RE
# relocation can start from has a name of one of these kinds, so the kernel types
# named alike are all libbpf can take as candidates. A superset (every named type,
# relocated or not) costs only a larger cut, never a relocation. No name: exit 1.
/^\[[0-9]+\] (STRUCT|UNION|ENUM|ENUM64|TYPEDEF|INT|FLOAT) '/ {
	match($0, /'[^']*'/)
	name = substr($0, RSTART + 1, RLENGTH - 2)	# "long unsigned int" has spaces
	if (name != "(anon)" && !(name in seen)) {
		seen[name] = 1
		names[n++] = name
	}
}
END {
	if (!n)
		exit 1
	print "/* Generated from the objects' BTF (scripts/core-names.awk): do not edit. */"
	print "static const char *const core_type_names[] = {"
	for (i = 0; i < n; i++)
		printf "\t\"%s\",\n", names[i]
	print "};"
}
