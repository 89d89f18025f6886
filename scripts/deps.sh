#!/bin/sh
# The Debian packages a make target needs, and nothing more: each target has
# its own list, each package a reason. As root, say what is missing and why,
# then install it (no recommends); otherwise print the same list and the
# exact command, and fail.
#
#   deps.sh [TARGET...]   TARGET: build (the default), check, sim, deb,
#                         coverage, valgrind, fuzz, all (every list)
set -eu
here=$(dirname "$0")

# One group a line: the targets that need it, the packages, the reason.
# "check" is every suite of make check (and of the targets that run the
# suites: check-quick, check-as-user, mutation, coverage, valgrind, sanitize).
groups='
build|meson ninja-build pkg-config gcc libjansson-dev libsystemd-dev python3|to configure and build rtid (meson, jansson, libsystemd for the readiness rtid serve tells systemd)
check|libcmocka-dev|the unit tests are cmocka programs
check|libfuse3-dev fuse3|the FUSE tests run against a /proc of their own (fuse-proc)
check|libfiu-dev libfiu0 fiu-utils|libc failure enumeration (libfiu, fiu-run)
check|valgrind|the shim-leaks test runs the shim under memcheck
check|runc podman containernetworking-plugins busybox-static iptables containerd|the engine tests checkpoint a busybox container through runc, Podman and containerd; CRIU saves its network rules with iptables
check|systemd|the unit tests rate the units with systemd-analyze
check sim|gnuplot-nox|rtid-sim --plot draws with gnuplot (the sim suite compares two plots)
check|python3-prometheus-client|the Prometheus output is read back by prometheus_client parser
check|bash-completion|the completion test loads the completion through bash-completion
check|strace|the hermetic test reads the system calls of rtid clients with strace
check|procps|check-as-user stops what its user left running with pkill
coverage|lcov|make coverage reports with lcov
valgrind|valgrind|make check-valgrind runs the suite under memcheck
fuzz|clang libclang-rt-dev|make check-fuzz builds libFuzzer harnesses with clang
deb|build-essential dpkg-dev debhelper fakeroot|dpkg-buildpackage and debhelper (build-essential: every package build requires it)
deb|lintian|make deb fails on lintian errors and warnings
'
# make deb also needs the package's own Build-Depends (debian/control).
build_depends() {
	sed -n '/^Build-Depends:/,/^[A-Z]/p' "$here/../debian/control" | sed '$d' |
		sed 's/^Build-Depends://; s/([^)]*)//g; s/\[[^]]*\]//g; s/<[^>]*>//g' |
		tr ',' '\n' | sed 's/|.*//; s/[[:space:]]//g; s/^debhelper-compat$/debhelper/' | grep . |
		tr '\n' ' '
}

targets=${*:-build}
for t in $targets; do
	case $t in
	build | check | sim | deb | coverage | valgrind | fuzz | all) ;;
	*) echo "deps.sh: unknown target $t (build check sim deb coverage valgrind fuzz all)" >&2; exit 2 ;;
	esac
done
# Every target builds rtid; those that run the suites need the build's and the suites' lists.
wanted="build"
for t in $targets; do
	case $t in
	coverage | valgrind) wanted="$wanted check $t" ;;
	*) wanted="$wanted $t" ;;
	esac
done

missing="" why=""
nl='
'
while IFS='|' read -r for pkgs reason; do
	[ -n "$for" ] || continue
	use=""
	for t in $for; do
		case " $wanted " in *" all "* | *" $t "*) use=1 ;; esac
	done
	[ -n "$use" ] || continue
	need=""
	for p in $pkgs; do
		case " $missing " in *" $p "*) continue ;; esac
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			need="$need $p"
	done
	[ -z "$need" ] && continue
	missing="$missing$need"
	why="$why  $(echo "$need" | sed 's/^ //'): $reason$nl"
done <<EOF
$groups
EOF
# The package's Build-Depends, for make deb.
case " $wanted " in
*" deb "* | *" all "*)
	need=""
	for p in $(build_depends); do
		case " $missing " in *" $p "*) continue ;; esac
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			need="$need $p"
	done
	[ -z "$need" ] || {
		missing="$missing$need"
		why="$why  $(echo "$need" | sed 's/^ //'): Build-Depends of debian/control$nl"
	}
	;;
esac

# The CRIU suite's CRIU build brings its own list of runtime libraries. Not
# having them only makes that suite skip, so this never fails for them. Only
# the targets that run the suites need it.
case " $wanted " in
*" check "* | *" all "*)
	criu_dir="${RTID_CRIU_DIR:-$here/../../shared/tools/criu}"
	if [ -f "$criu_dir/deps.sh" ]; then
		sh "$criu_dir/deps.sh" || echo "rtid: the CRIU suite will skip until that is installed" >&2
	fi
	;;
esac
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "rtid: installing for $targets (apt-get, no recommends):"
	printf '%s' "$why"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
else
	echo "rtid: missing packages for $targets:" >&2
	printf '%s' "$why" >&2
	echo "Install them with:" >&2
	echo "  sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
