# A thin wrapper over meson: every target sets up what it needs.
BUILD ?= build
MESON_ARGS ?=
SUITES_TEST = --no-suite bench

.PHONY: all deps check sim bench coverage check-valgrind check-sanitize check-fuzz clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@sh scripts/deps.sh

# A new case file is a new test: reconfigure when the list changes.
$(BUILD)/build.ninja: $(wildcard cases/*.case)
	@sh scripts/deps.sh
	if [ -f $@ ]; then meson setup --reconfigure $(BUILD) $(MESON_ARGS); \
	else meson setup $(BUILD) $(MESON_ARGS); fi

check: deps all
	meson test -C $(BUILD) --print-errorlogs $(SUITES_TEST)

# The simulator's table of every workload x strategy, and its plot.
sim: all
	$(BUILD)/sim/rtid-sim --plot $(BUILD)/restore-vs-gpus.svg

# Performance figures, side by side in one run (see README).
bench: all
	meson test -C $(BUILD) --benchmark --verbose rtid-bench

clean:
	rm -rf $(BUILD) build-*
