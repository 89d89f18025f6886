#!/bin/sh
# Make sure the Debian packages rtid needs are present. As root, install the
# missing ones; otherwise print the exact command and fail. Arguments name
# further packages that one target needs (make deb: the packaging tools).
set -eu
pkgs="meson ninja-build pkg-config gcc libjansson-dev libcmocka-dev libfuse3-dev fuse3 \
libfiu-dev libfiu0 fiu-utils valgrind lcov clang libclang-rt-dev libsystemd-dev python3"
# The engine tests (tests/engine): a busybox container checkpointed by runc
# by Podman and by containerd (ctr); CRIU saves a network namespace's rules
# with iptables.
pkgs="$pkgs runc podman containernetworking-plugins busybox-static iptables containerd"
# The unit test rates systemd/rtid.service with systemd-analyze.
pkgs="$pkgs systemd"
# rtid-sim --plot draws with gnuplot (make sim).
pkgs="$pkgs gnuplot-nox"
# The Prometheus output is read back by prometheus_client's own parser.
pkgs="$pkgs python3-prometheus-client"
# The completion test loads the bash completion through bash-completion.
pkgs="$pkgs bash-completion"
# The test hermetic reads the system calls of rtid's clients with strace.
pkgs="$pkgs strace"
# make check-as-user (CI) stops what its user left running with pkill.
pkgs="$pkgs procps"
pkgs="$pkgs $*"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# The CRIU suite's CRIU build brings its own list of runtime libraries. Not
# having them only makes that suite skip, so this never fails for them.
criu_dir="${RTID_CRIU_DIR:-$(dirname "$0")/../../shared/tools/criu}"
if [ -f "$criu_dir/deps.sh" ]; then
	sh "$criu_dir/deps.sh" || echo "rtid: the CRIU suite will skip until that is installed" >&2
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "rtid: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
else
	echo "rtid: missing packages. Install them with:" >&2
	echo "  sudo apt-get install -y$missing" >&2
	exit 1
fi
