# sbx-bpf — build, test and demo.
#
#   make            build/sbx-bpf (static) and the test programs
#   make test       install deps, build, run every test layer, print "N passed, N failed"
#   make fuzz       run each libFuzzer target (tests/fuzz/) for FUZZ_SECONDS (600) seconds
#   make demo       install deps, build, boot the VM and show a sandboxed agent command
#   make demo-containers   the same for a podman container attached by the OCI hook
#   make bench      install deps, build, boot the VM and run the benchmarks (bench/README.md)
#   make vm-shell   a shell in the VM (KERNEL=6.1|6.12)
#   make V=1        show full commands;  make SAN=1  sanitizers for host tests
#   make san        the unit tests built with ASan+UBSan into build/san (tests/run.sh san)
.DELETE_ON_ERROR:
.SECONDARY:
.DEFAULT_GOAL := all

BUILD	?= build
CLANG	?= clang-19
BPFTOOL	?= bpftool
CC	?= gcc
KERNEL	?= 6.12
VERSION	:= 0.1.0$(shell git describe --always --dirty 2>/dev/null | sed 's/^/-g/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-7s %s\n' "$(1)" "$(2)";
endif

WARN	:= -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
	   -Wno-format-truncation
CFLAGS	?= -O2 -g
CFLAGS	+= $(WARN) -std=gnu11 -D_GNU_SOURCE \
	   -Ibpf -I$(BUILD) -MMD -MP
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
endif
STATIC_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -ljansson -Wl,-Bdynamic
BPF_CFLAGS := -g -O2 --target=bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	      -Ivmlinux -Ibpf -MMD -MP

# The enforcement programs: one object linked from several files (sandbox.h).
SBX_PARTS  := fs net task
BPF_PROGS  := sbx probe shared moves
SKELS	   := $(BPF_PROGS:%=$(BUILD)/%.skel.h)
# Command handlers (top level: they log) vs. library code (returns errors; unit-tested).
CMD_SRCS   := userspace/main.c userspace/run.c userspace/check.c userspace/lifecycle.c userspace/daemon.c userspace/attach.c \
	      userspace/evwatch.c userspace/grant.c userspace/progset.c userspace/cmdcommon.c userspace/ocihook.c
LIB_SRCS   := $(filter-out $(CMD_SRCS),$(wildcard userspace/*.c))
# The preset policies, linked in as data (presets.S .incbin's policies/*.json).
PRESETS	   := $(wildcard policies/*.json)
LIB_OBJS   := $(LIB_SRCS:userspace/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/presets.o
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
BPFT_BINS  := $(BUILD)/tests/bpf/fs_match_test $(BUILD)/tests/bpf/map_purge_test $(BUILD)/tests/bpf/moves_test
VM_BINS	   := $(BUILD)/tests/bin/sbx-probe $(BUILD)/tests/bin/sbx-escape $(BUILD)/tests/bin/sbx-slots \
	      $(BUILD)/tests/bin/sbx-entry $(BUILD)/tests/bin/sbx-global $(BUILD)/tests/bin/sbx-memo
BENCH_BINS := $(addprefix $(BUILD)/bench/bin/,openbench connectbench startbench landlock-run mapmem evflood \
	      noop-lsm progstats)
# The unit tests again, with ASan+UBSan (leaks included), in a tree of their own.
SAN_CFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_OBJS   := $(LIB_SRCS:userspace/%.c=$(BUILD)/san/obj/%.o) $(BUILD)/obj/presets.o
SAN_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/san/tests/unit/%)
# libFuzzer targets: the library built by clang with coverage for the fuzzer, ASan and UBSan.
FUZZ_CFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
	       -Wno-missing-field-initializers
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_OBJS  := $(LIB_SRCS:userspace/%.c=$(BUILD)/fuzz/obj/%.o) $(BUILD)/obj/presets.o
FUZZ_BINS  := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 600

.PHONY: all deps test test-unit test-bpf test-host test-vm test-san test-fuzz san fuzz-build fuzz \
	demo demo-containers bench vm-shell clean
all: $(BUILD)/sbx-bpf $(UNIT_BINS) $(BPFT_BINS) $(VM_BINS) $(BENCH_BINS)

deps:
	$(Q)scripts/install-deps.sh

# --- BPF: .bpf.c → .bpf.o → .skel.h -----------------------------------------
$(BUILD)/%.bpf.o: bpf/%.bpf.c | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/bpf/%.bpf.o: tests/bpf/%.bpf.c | $(BUILD)/tests/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/sbx.bpf.o: $(SBX_PARTS:%=$(BUILD)/%.bpf.o)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# libbpf notes the .sbx.hooks section it skips (the programs' recorded hook arguments, bpf/sandbox.h
# SBX_LSM): expected, so not shown; anything else it says is.
$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@ 2>$@.log || { cat $@.log >&2; exit 1; }
	$(Q)grep -v 'skipping unrecognized data section.*\.sbx\.hooks' $@.log >&2 || true

# Where the enforcement object's .bss has each variable, and how large it is, for the extension
# object that reads them through that very map (bpf/shared.bpf.c): from the object's BTF
# (scripts/bss-layout.awk). None: the build stops. Rewritten only when it changes.
$(BUILD)/sbx_bss_layout.h: $(BUILD)/sbx.bpf.o scripts/bss-layout.awk
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $< format raw | awk -f scripts/bss-layout.awk >$@.tmp || \
		{ echo "$@: no .bss variables in $<" >&2; rm -f $@.tmp; exit 1; }
	$(Q)cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(BUILD)/shared.bpf.o: bpf/shared.bpf.c $(BUILD)/sbx_bss_layout.h | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -I$(BUILD) -c $< -o $@

# The types the objects' CO-RE relocations start from, which the loader cuts the kernel's BTF to
# (userspace/corebtf.h): read from their .BTF.ext by a build tool (scripts/core-roots.c).
$(BUILD)/core-roots: scripts/core-roots.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< -lbpf -lelf -lz -lzstd

$(BUILD)/sbx_core_roots.h: $(BUILD)/core-roots $(BUILD)/sbx.bpf.o $(BUILD)/shared.bpf.o
	$(call msg,GEN,$@)
	$(Q)$(BUILD)/core-roots $(BUILD)/sbx.bpf.o $(BUILD)/shared.bpf.o >$@.tmp || { rm -f $@.tmp; exit 1; }
	$(Q)cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

# Which build of the programs a pinned set is (loader.c meta): hashed once here, not at every start.
$(BUILD)/sbx.objhash.h: $(BUILD)/sbx.bpf.o $(BUILD)/shared.bpf.o
	$(call msg,GEN,$@)
	$(Q)echo "#define SBX_OBJECT_HASH 0x$$(cat $^ | sha256sum | cut -c1-16)ULL" >$@

# --- userspace ----------------------------------------------------------------
$(BUILD)/obj/%.o: userspace/%.c $(SKELS) | $(BUILD)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@

$(BUILD)/obj/presets.o $(BUILD)/static/presets.o: userspace/presets.S $(PRESETS) | $(BUILD)/obj $(BUILD)/static
	$(call msg,AS,$@)
	$(Q)$(CC) -c $< -o $@

# Rewritten only when the version changes, so it triggers no needless rebuild.
$(BUILD)/version.h: FORCE | $(BUILD)
	$(Q)echo '#define SBX_VERSION "$(VERSION)"' | cmp -s - $@ || \
		echo '#define SBX_VERSION "$(VERSION)"' > $@
$(BUILD)/static/main.o $(BUILD)/obj/main.o $(BUILD)/static/daemon.o: $(BUILD)/version.h
$(BUILD)/static/loader.o $(BUILD)/obj/loader.o $(BUILD)/san/obj/loader.o $(BUILD)/fuzz/obj/loader.o: \
	$(BUILD)/sbx.objhash.h $(BUILD)/sbx_core_roots.h
.PHONY: FORCE

# The shipped binary is static and never sanitized: it must drop into any VM.
$(BUILD)/static/%.o: userspace/%.c $(SKELS) | $(BUILD)/static
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/sbx-bpf: $(LIB_SRCS:userspace/%.c=$(BUILD)/static/%.o) $(CMD_SRCS:userspace/%.c=$(BUILD)/static/%.o) \
		$(BUILD)/static/presets.o
	$(call msg,LINK,$@)
	$(Q)$(CC) -static -Wl,--build-id=sha1 -o $@ $^ -lbpf -lelf -lz -lzstd -ljansson	# the BTF cache's key (kbtf.h)

# --- tests ------------------------------------------------------------------
$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) | $(BUILD)/tests/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -Wl,--build-id=sha1 -Iuserspace -DSBX_SRCDIR='"$(CURDIR)"' -o $@ $< $(LIB_OBJS) $(UNIT_WRAP) \
		-lcmocka $(STATIC_LIBS)

# resolvers.c against a fake kernel: the loader calls it makes go to the test's __wrap_ functions.
RESOLVERS_FAKED := get_sandbox replace_sandbox next_sandbox dns_lookup dns_update dns_delete dns_client \
		   pin_steer unpin_steer steer_pinned steer_age
$(BUILD)/tests/unit/test_resolvers $(BUILD)/san/tests/unit/test_resolvers: \
	UNIT_WRAP := $(RESOLVERS_FAKED:%=-Wl,--wrap=loader__%)

$(BUILD)/tests/bpf/fs_match_test: tests/bpf/fs_match_test.c $(BUILD)/tests/bpf/fs_match_test.skel.h \
		$(LIB_OBJS) | $(BUILD)/tests/bpf
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -Iuserspace -I$(BUILD)/tests/bpf -o $@ \
		$< $(LIB_OBJS) -lcmocka $(STATIC_LIBS)

$(BUILD)/tests/bpf/map_purge_test $(BUILD)/tests/bpf/moves_test: $(BUILD)/tests/bpf/%: tests/bpf/%.c $(LIB_OBJS) \
		| $(BUILD)/tests/bpf
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -Iuserspace -o $@ $< $(LIB_OBJS) -lcmocka $(STATIC_LIBS)

$(BUILD)/san/obj/%.o: userspace/%.c $(SKELS) | $(BUILD)/san/obj
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_CFLAGS) -c $< -o $@

$(BUILD)/san/tests/unit/%: tests/unit/%.c $(SAN_OBJS) | $(BUILD)/san/tests/unit
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_CFLAGS) -Iuserspace -DSBX_SRCDIR='"$(CURDIR)"' -o $@ $< $(SAN_OBJS) \
		$(UNIT_WRAP) -lcmocka $(STATIC_LIBS)

$(BUILD)/fuzz/obj/%.o: userspace/%.c $(SKELS) | $(BUILD)/fuzz/obj
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(CFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) | $(BUILD)/fuzz/obj
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(CFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Iuserspace -o $@ $< $(FUZZ_OBJS) \
		$(STATIC_LIBS)

# The test helpers that reach a map (libbpf): a loaded one by name or by its BTF, a pinned one
# by path.
$(BUILD)/tests/bin/sbx-slots $(BUILD)/tests/bin/sbx-entry $(BUILD)/tests/bin/sbx-global $(BUILD)/tests/bin/sbx-memo: $(BUILD)/tests/bin/%: tests/vm/%.c bpf/sbx_abi.h | \
		$(BUILD)/tests/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Ibpf -static -o $@ $< -lbpf -lelf -lz -lzstd

$(BUILD)/tests/bin/%: tests/vm/%.c | $(BUILD)/tests/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

# The adversarial suite's helper (tests/escape/): one escape attempt per run.
$(BUILD)/tests/bin/%: tests/escape/%.c | $(BUILD)/tests/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

# --- benchmarks (run in the VM, static like the test helpers) ------------------
$(BUILD)/bench/bin/%: bench/%.c | $(BUILD)/bench/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $<

# The no-op floor: a `return 0` program on every LSM hook the enforcement object uses.
$(BUILD)/bench/noop.bpf.c: $(BUILD)/sbx.bpf.o bench/noop-gen.sh | $(BUILD)/bench/bin
	$(call msg,GEN,$@)
	$(Q)bench/noop-gen.sh $< >$@

$(BUILD)/bench/noop.bpf.o: $(BUILD)/bench/noop.bpf.c
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Bench tools that list or load programs with libbpf.
$(BUILD)/bench/bin/progstats: bench/progstats.c | $(BUILD)/bench/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $< -lbpf -lelf -lz -lzstd

$(BUILD)/bench/bin/noop-lsm: bench/noop-lsm.c $(BUILD)/bench/noop.skel.h | $(BUILD)/bench/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BUILD)/bench -static -o $@ $< -lbpf -lelf -lz -lzstd

$(BUILD) $(BUILD)/obj $(BUILD)/static $(BUILD)/tests/unit $(BUILD)/tests/bpf $(BUILD)/tests/bin \
		$(BUILD)/bench/bin $(BUILD)/san/obj $(BUILD)/san/tests/unit $(BUILD)/fuzz/obj:
	$(Q)mkdir -p $@

# --- entry points -------------------------------------------------------------
# Each starts by installing what it needs, so a fresh machine needs nothing else.
test: deps
	$(Q)$(MAKE) --no-print-directory all san fuzz-build
	$(Q)tests/run.sh

test-unit test-bpf test-host test-vm: all
	$(Q)tests/run.sh $(@:test-%=%)

san: $(SAN_BINS)
fuzz-build: $(FUZZ_BINS)

test-san: san
	$(Q)tests/run.sh san

# tests/run.sh's fuzz layer runs each target for SBX_FUZZ_SECONDS (30 s in CI).
test-fuzz: fuzz-build
	$(Q)tests/run.sh fuzz

fuzz: deps
	$(Q)$(MAKE) --no-print-directory fuzz-build
	$(Q)SBX_FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run.sh fuzz

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/vm.sh demo $(KERNEL)

demo-containers: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/vm.sh demo-containers $(KERNEL)

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/vm.sh bench $(KERNEL)

vm-shell: all
	$(Q)scripts/vm.sh shell $(KERNEL)

clean:
	$(Q)rm -rf $(BUILD)

-include $(wildcard $(BUILD)/*.d $(BUILD)/obj/*.d $(BUILD)/static/*.d $(BUILD)/tests/*/*.d \
	$(BUILD)/bench/*/*.d $(BUILD)/san/obj/*.d $(BUILD)/san/tests/*/*.d $(BUILD)/fuzz/*.d $(BUILD)/fuzz/obj/*.d)
