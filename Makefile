# A thin wrapper over meson: every target sets up what it needs.
BUILD ?= build
MESON_ARGS ?=
SUITES_TEST = --no-suite bench

.PHONY: all deps check check-quick check-as-user check-stress check-mutation sim demo bench coverage check-valgrind check-sanitize check-fuzz deb gpu-kit clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@sh scripts/deps.sh

# The case files are listed in cases/meson.build: ninja reconfigures when
# that list changes.
$(BUILD)/build.ninja:
	@sh scripts/deps.sh
	if [ -f $@ ]; then meson setup --reconfigure $(BUILD) $(MESON_ARGS); \
	else meson setup $(BUILD) $(MESON_ARGS); fi

# Ends with the list of what was skipped and why (a skip passes in meson's
# summary); the exit status is the suite's.
check: deps all
	rc=0; meson test -C $(BUILD) --print-errorlogs $(SUITES_TEST) || rc=$$?; \
	python3 scripts/skipped.py $(BUILD)/meson-logs/testlog.json; exit $$rc

# The unit and case suites alone: the quick loop while working (a few
# minutes on 2 cores, as a user or as root).
check-quick: deps all
	rc=0; meson test -C $(BUILD) --print-errorlogs --suite unit --suite cases || rc=$$?; \
	python3 scripts/skipped.py $(BUILD)/meson-logs/testlog.json; exit $$rc

# The same suites as a normal user would run them, from root (CI does): a
# user made for it, a clone of HEAD that user owns, /dev/fuse opened to it
# for the run and put back after (scripts/check-as-user.sh).
check-as-user: deps
	sh scripts/check-as-user.sh

# The scan on the real kernel while threads exit mid-walk, STRESS_TRIALS
# trials (make check runs 20): the tally, and failure on any wrong answer.
STRESS_TRIALS ?= 2000
check-stress: all
	$(BUILD)/tests/stress-walk $(STRESS_TRIALS)

# Mutation testing of the rule code (mutation/README.md): every mutant of
# MUTATION_PATHS, or a seeded sample of MUTATION_SAMPLE; slow, so not in
# check. Its scratch copy, builds and coverage map are in build-mutation/.
MUTATION_PATHS ?= src/rules src/proc
MUTATION_SAMPLE ?= 0
MUTATION_SEED ?= 1
check-mutation: deps
	python3 mutation/mutate.py --sample $(MUTATION_SAMPLE) --seed $(MUTATION_SEED) \
		$(MUTATION_ARGS) $(MUTATION_PATHS)

# The simulator's table of every workload x strategy, and its plot (under
# $(BUILD), its path printed last).
sim: all
	$(BUILD)/sim/rtid-sim --evidence evidence --plot $(BUILD)/rtid-sim.svg

# rtid without a GPU, in one command (doc/demo.md): a stand-in CUDA process,
# rtid serve on the mock driver, the shim, CRIU and containers where they can run.
demo: all
	sh scripts/demo.sh $(BUILD)

# Performance figures, side by side in one run (see README).
bench: all
	meson test -C $(BUILD) --benchmark --verbose rtid-bench

# The GPU kit: one archive to copy to a GPU machine and run there
# (doc/hardware-validation.md). Built apart from $(BUILD), whose defaults are
# under its own tree for the tests (-Ddefaults): the kit's rtid keeps the
# node's (/run/rtid, /etc/rtid, /var/lib/rtid).
KIT_BUILD ?= build-kit
gpu-kit: deps
	[ -f $(KIT_BUILD)/build.ninja ] || meson setup $(KIT_BUILD) -Ddefaults=node -Dtests=disabled \
		-Dfuse=disabled $(MESON_ARGS)
	ninja -C $(KIT_BUILD) kit/rtid-gpu-kit.tar.gz
	@echo "GPU kit: $(KIT_BUILD)/kit/rtid-gpu-kit.tar.gz"

# Coverage of src/ by the whole suite, against the gate in coverage/gate.
coverage: deps
	[ -f build-cov/build.ninja ] || meson setup build-cov -Db_coverage=true --buildtype=debug
	ninja -C build-cov
	find build-cov -name '*.gcda' -delete
	meson test -C build-cov --no-suite bench --print-errorlogs
	sh coverage/report.sh build-cov

# The suite under valgrind's memcheck (children traced: the CLI, fakeproc, mocks).
# Not the CRIU suite: CRIU itself (ptrace, parasite code) cannot run under it.
# Not the shell scripts (suite script): memcheck would check the shell itself.
check-valgrind: deps
	[ -f build-vg/build.ninja ] || meson setup build-vg --buildtype=debug
	ninja -C build-vg
	meson test -C build-vg --setup valgrind --no-suite bench --no-suite fiu --no-suite sim \
		--no-suite criu --no-suite script --print-errorlogs

# AddressSanitizer + UndefinedBehaviorSanitizer, then ThreadSanitizer.
check-sanitize: deps
	[ -f build-asan/build.ninja ] || meson setup build-asan --buildtype=debug \
		-Db_sanitize=address,undefined -Db_lundef=false
	ninja -C build-asan
	# handle_segv=0: the tool stand-ins crash on purpose, by the signal itself.
	# The sim suite checks timing, which sanitizers change. The install test's
	# self-contained rtid is built plain and cannot load the sanitized mock libcuda.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:handle_segv=0 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 RTID_SKIP_SELF_CONTAINED=1 \
		RTID_UNDER_SANITIZER=1 meson test -C build-asan --no-suite bench --no-suite sim \
		--timeout-multiplier 4 --print-errorlogs
	[ -f build-tsan/build.ninja ] || meson setup build-tsan --buildtype=debug \
		-Db_sanitize=thread -Db_lundef=false
	ninja -C build-tsan
	TSAN_OPTIONS=halt_on_error=1:handle_segv=0 RTID_SKIP_SELF_CONTAINED=1 \
		RTID_UNDER_SANITIZER=1 meson test -C build-tsan --suite unit --suite cases \
		--timeout-multiplier 4 --print-errorlogs

# A short, bounded libFuzzer run of every parser harness (FUZZ_SECONDS each),
# from the seed corpus in fuzz/corpus; new inputs stay in build-fuzz/corpus.
FUZZ_SECONDS ?= 20
check-fuzz: deps
	[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled \
		-Dfuse=disabled -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug
	ninja -C build-fuzz
	sh fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# Debian packages (rtid, librtid0, librtid-dev) built from a copy of the
# tree in build-deb/, where the .deb files land, then checked by lintian.
deb:
	@sh scripts/deps.sh debhelper dpkg-dev fakeroot lintian
	rm -rf build-deb && mkdir -p build-deb/rtid
	tar -c --exclude='./build*' --exclude=./.git . | tar -x -C build-deb/rtid
	cd build-deb/rtid && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning build-deb/*.changes
	$(MAKE) all
	sh tests/install/deb.sh build-deb $(BUILD)/mocks/libmockcuda.so

clean:
	rm -rf $(BUILD) build-*
