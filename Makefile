# A thin wrapper over meson: every target sets up what it needs, and only
# that (scripts/deps.sh TARGET: each target's packages, each with its reason).
BUILD ?= build
MESON_ARGS ?=
SUITES_TEST = --no-suite bench

.PHONY: all deps tests-ready check check-quick check-as-user check-stress check-mutation sim demo bench coverage check-valgrind check-sanitize check-fuzz deb gpu-kit clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# Every target's packages at once (a machine set up for all of them).
deps:
	@sh scripts/deps.sh all

deps-%:
	@sh scripts/deps.sh $*

# The case files are listed in cases/meson.build: ninja reconfigures when
# that list changes.
$(BUILD)/build.ninja:
	@sh scripts/deps.sh build
	if [ -f $@ ]; then meson setup --reconfigure $(BUILD) $(MESON_ARGS); \
	else meson setup $(BUILD) $(MESON_ARGS); fi

# Ends with the list of what was skipped and why (a skip passes in meson's
# summary); the exit status is the suite's.
# The suites' packages, and a build that has the suites: tests and fuse are
# "auto", so a build configured before cmocka and FUSE were there (make sim
# on a fresh machine, then make check) has no tests until it is configured
# again.
tests-ready: deps-check
	@$(MAKE) -s --no-print-directory $(BUILD)/build.ninja
	@python3 -c 'import json, sys; i = sys.argv[1] + "/meson-info/intro-"; \
		found = {d["name"] for d in json.load(open(i + "dependencies.json"))}; \
		opt = {o["name"]: o["value"] for o in json.load(open(i + "buildoptions.json"))}; \
		sys.exit(any(opt[o] != "disabled" and d not in found for d, o in (("cmocka", "tests"), ("fuse3", "fuse"))))' \
		$(BUILD) || { echo "rtid: $(BUILD) was configured without cmocka or FUSE: configuring it again"; \
		meson setup --reconfigure $(BUILD) $(MESON_ARGS); }

check: tests-ready
	ninja -C $(BUILD)
	rc=0; meson test -C $(BUILD) --print-errorlogs $(SUITES_TEST) || rc=$$?; \
	python3 scripts/skipped.py $(BUILD)/meson-logs/testlog.json; exit $$rc

# The unit and case suites alone: the quick loop while working (a few
# minutes on 2 cores, as a user or as root).
check-quick: tests-ready
	ninja -C $(BUILD)
	rc=0; meson test -C $(BUILD) --print-errorlogs --suite unit --suite cases || rc=$$?; \
	python3 scripts/skipped.py $(BUILD)/meson-logs/testlog.json; exit $$rc

# The same suites as a normal user would run them, from root (CI does): a
# user made for it, a clone of HEAD that user owns, /dev/fuse opened to it
# for the run and put back after (scripts/check-as-user.sh).
check-as-user: deps-check
	sh scripts/check-as-user.sh

# The scan on the real kernel while threads exit mid-walk, STRESS_TRIALS
# trials (make check runs 20): the tally, and failure on any wrong answer.
STRESS_TRIALS ?= 2000
check-stress: tests-ready
	ninja -C $(BUILD)
	$(BUILD)/tests/stress-walk $(STRESS_TRIALS)

# Mutation testing of the rule code (mutation/README.md): every mutant of
# MUTATION_PATHS, or a seeded sample of MUTATION_SAMPLE; slow, so not in
# check. Its scratch copy, builds and coverage map are in build-mutation/.
MUTATION_PATHS ?= src/rules src/proc
MUTATION_SAMPLE ?= 0
MUTATION_SEED ?= 1
check-mutation: deps-check
	python3 mutation/mutate.py --sample $(MUTATION_SAMPLE) --seed $(MUTATION_SEED) \
		$(MUTATION_ARGS) $(MUTATION_PATHS)

# The simulator's table of every workload x strategy, and its plot (under
# $(BUILD), its path printed last).
sim: deps-sim
	$(MAKE) all
	$(BUILD)/sim/rtid-sim --evidence evidence --plot $(BUILD)/rtid-sim.svg

# rtid without a GPU, in one command (doc/demo.md): a stand-in CUDA process,
# rtid serve on the mock driver, the shim, CRIU and containers where they can run.
demo: all
	sh scripts/demo.sh $(BUILD)

# Performance figures, side by side in one run (see README).
bench: tests-ready
	ninja -C $(BUILD)
	meson test -C $(BUILD) --benchmark --verbose rtid-bench

# The GPU kit: one archive to copy to a GPU machine and run there
# (doc/hardware-validation.md). Built apart from $(BUILD), whose defaults are
# under its own tree for the tests (-Ddefaults): the kit's rtid keeps the
# node's (/run/rtid, /etc/rtid, /var/lib/rtid).
KIT_BUILD ?= build-kit
gpu-kit: deps-build
	[ -f $(KIT_BUILD)/build.ninja ] || meson setup $(KIT_BUILD) -Ddefaults=node -Dtests=disabled \
		-Dfuse=disabled $(MESON_ARGS)
	ninja -C $(KIT_BUILD) kit/rtid-gpu-kit.tar.gz
	@echo "GPU kit: $(KIT_BUILD)/kit/rtid-gpu-kit.tar.gz"

# Coverage of src/ by the whole suite, against the gate in coverage/gate.
coverage: deps-coverage
	[ -f build-cov/build.ninja ] || meson setup build-cov -Db_coverage=true --buildtype=debug
	ninja -C build-cov
	find build-cov -name '*.gcda' -delete
	meson test -C build-cov --no-suite bench --print-errorlogs
	sh coverage/report.sh build-cov

# The suite under valgrind's memcheck (children traced: the CLI, fakeproc, mocks).
# Not the CRIU suite: CRIU itself (ptrace, parasite code) cannot run under it.
# Not the shell scripts (suite script): memcheck would check the shell itself.
check-valgrind: deps-valgrind
	[ -f build-vg/build.ninja ] || meson setup build-vg --buildtype=debug
	ninja -C build-vg
	meson test -C build-vg --setup valgrind --no-suite bench --no-suite fiu --no-suite sim \
		--no-suite criu --no-suite script --print-errorlogs

# AddressSanitizer + UndefinedBehaviorSanitizer, then ThreadSanitizer.
check-sanitize: deps-check
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
check-fuzz: deps-fuzz
	[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled \
		-Dfuse=disabled -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug
	ninja -C build-fuzz
	sh fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# Debian packages (rtid, librtid0, librtid-dev, and rtid-criu-plugin where
# CRIU's source is found) built from a copy of the tree in build-deb/, where
# the .deb files land, then checked by lintian and unpacked into a scratch
# root. The copy has no ../shared beside it: the plugin's CRIU source goes in
# by absolute path (CRIU_SOURCE, default the tarball of ../shared/tools/criu).
CRIU_SOURCE ?= $(firstword $(wildcard ../shared/tools/criu/criu-*.tar.gz))
deb:
	@sh scripts/deps.sh deb
	rm -rf build-deb && mkdir -p build-deb/rtid
	tar -c --exclude='./build*' --exclude=./.git . | tar -x -C build-deb/rtid
	@if [ -n "$(CRIU_SOURCE)" ]; then echo "rtid: rtid-criu-plugin built against $(abspath $(CRIU_SOURCE))"; \
	else echo "rtid: no CRIU source (CRIU_SOURCE=, or ../shared/tools/criu/criu-*.tar.gz):" \
		"rtid-criu-plugin left out (build profile pkg.rtid.nocriu)"; fi
	cd build-deb/rtid && RTID_CRIU_SOURCE=$(if $(CRIU_SOURCE),$(abspath $(CRIU_SOURCE))) \
		dpkg-buildpackage -us -uc -b $(if $(CRIU_SOURCE),,-Ppkg.rtid.nocriu)
	lintian --fail-on error,warning build-deb/*.changes
	$(MAKE) all
	RTID_DEB_PLUGIN=$(if $(CRIU_SOURCE),1,0) sh tests/install/deb.sh build-deb \
		$(BUILD)/mocks/libmockcuda.so

clean:
	rm -rf $(BUILD) build-*
