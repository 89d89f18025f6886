#!/bin/sh
# The Debian packages unpacked into a scratch root (dpkg -x) work from there:
# the CLI starts, the shim link points at it, and the api backend finds the
# packaged worker relative to the program. Their maintainer scripts run the
# units' steps (dh_installsystemd found the units), the guides the manual
# pages name are where they say, and rtid-criu-plugin holds the plugin where
# meson install puts it, for the CRIU its description names.
# Usage: deb.sh DEB_DIR MOCK_LIBCUDA
# RTID_DEB_PLUGIN=1: rtid-criu-plugin must be there (make deb found CRIU's
# source); 0: it must not (built with the profile pkg.rtid.nocriu).
set -eu
debs=$1 mock=$2
root=$(mktemp -d)
# A process to resolve, holding none of the test's descriptors.
# shellcheck disable=SC2217
sleep 600 </dev/null >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT INT TERM HUP
fail() { echo "deb: $*" >&2; exit 1; }
for p in rtid librtid0 librtid-dev; do
	f=$(ls "$debs"/${p}_*.deb) || fail "no $p package in $debs"
	dpkg -x "$f" "$root"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
export LD_LIBRARY_PATH="$root/usr/lib/$multiarch"
unset RTID_WORKER
# The packages carry the node's defaults: nothing of the node's is used here.
export RTID_SOCKET="$root/rtid.sock" RTID_ATTESTATION="$root/attestation.json" RTID_SHIM_CONF=
v=$("$root/usr/bin/rtid" --version) || fail "rtid does not start from the scratch root"
[ "$(readlink -f "$root/usr/lib/rtid/shim/cuda-checkpoint")" = "$root/usr/bin/rtid" ] ||
	fail "the shim link does not point at rtid"
# The layout of doc/install.md: the commented settings file, the attestation's directory.
[ -f "$root/etc/rtid/shim.conf" ] && ! grep -q '^[^#]' "$root/etc/rtid/shim.conf" ||
	fail "no commented /etc/rtid/shim.conf"
[ -d "$root/var/lib/rtid" ] || fail "no /var/lib/rtid"
[ -f "$root/usr/include/rtid.h" ] && [ -f "$root/usr/lib/$multiarch/pkgconfig/rtid.pc" ] ||
	fail "librtid-dev lacks the header or the pkg-config file"

# The units where Debian 12's dh_installsystemd (debhelper 13.11) looks for
# them, lib/systemd/system: from usr/lib/systemd/system it makes no
# maintainer scripts at all.
rtid_deb=$(ls "$debs"/rtid_*.deb)
for u in rtid.socket rtid.service rtid-metrics.service rtid-metrics.timer; do
	[ -f "$root/lib/systemd/system/$u" ] || fail "no /lib/systemd/system/$u"
	[ ! -e "$root/usr/lib/systemd/system/$u" ] ||
		fail "$u in /usr/lib/systemd/system, where dh_installsystemd 13.11 does not look"
done
grep -q '^ExecStart=/usr/bin/rtid serve status --prometheus ' "$root/lib/systemd/system/rtid-metrics.service" ||
	fail "rtid-metrics.service does not run the packaged rtid"
script() { dpkg-deb -I "$rtid_deb" "$1" 2>/dev/null || fail "rtid has no $1"; }
ctrl=$(dpkg-deb --ctrl-tarfile "$rtid_deb" | tar -t | sed 's|^\./||' | sort | tr '\n' ' ')
for m in postinst prerm postrm; do
	case " $ctrl " in *" $m "*) ;; *) fail "rtid has no $m (its control: $ctrl)" ;; esac
done
postinst=$(script postinst) prerm=$(script prerm) postrm=$(script postrm)
# Installed, reloaded, tracked; enabled only where the admin had enabled them
# (--no-enable) and started by nobody (--no-start); restarted on upgrade if running.
for u in rtid.socket rtid.service rtid-metrics.timer; do
	echo "$postinst" | grep -q "deb-systemd-helper update-state '$u'" ||
		fail "postinst does not track $u with deb-systemd-helper"
	echo "$postinst" | grep -q "deb-systemd-helper debian-installed '$u'" ||
		fail "postinst enables $u by itself (no --no-enable)"
	echo "$postrm" | grep -q "deb-systemd-helper purge.*'$u'" || fail "postrm does not purge $u's state"
	echo "$prerm" | grep -q "deb-systemd-invoke stop.*$u" || fail "prerm does not stop $u on removal"
done
echo "$postinst" | grep -q 'systemctl --system daemon-reload' || fail "postinst does not reload systemd"
echo "$postinst" | grep -q 'deb-systemd-invoke try-restart' || fail "postinst does not restart a running daemon on upgrade"
echo "$postinst" | grep -q 'deb-systemd-invoke start' && fail "postinst starts a unit"
echo "$postrm" | grep -q 'systemctl --system daemon-reload' || fail "postrm does not reload systemd"
if dpkg-deb -I "$rtid_deb" preinst 2>/dev/null | grep -q 'deb-systemd-invoke stop'; then
	fail "preinst stops the units before an upgrade and nothing starts them again"
fi

# The guides the manual pages name, under the names they give.
for d in serve shim install engines plugin; do
	[ -f "$root/usr/share/doc/rtid/$d.md" ] || fail "no /usr/share/doc/rtid/$d.md"
done

# rtid's CRIU plugin: its own package, where meson install puts it
# (LIBDIR/rtid/criu), never in CRIU's plugin directory, for the CRIU its
# description names, which the plugin itself was built for; no dependency on
# a criu Debian 12 cannot give.
plugin_deb=$(ls "$debs"/rtid-criu-plugin_*.deb 2>/dev/null || true)
if [ "${RTID_DEB_PLUGIN:-1}" = 1 ]; then
	[ -n "$plugin_deb" ] || fail "no rtid-criu-plugin package in $debs"
	dpkg -x "$plugin_deb" "$root"
	so=$root/usr/lib/$multiarch/rtid/criu/cuda_plugin.so
	[ -f "$so" ] || fail "rtid-criu-plugin has no /usr/lib/$multiarch/rtid/criu/cuda_plugin.so"
	[ -f "$root/usr/share/man/man8/rtid-cuda-plugin.8.gz" ] || fail "rtid-criu-plugin has no rtid-cuda-plugin(8)"
	[ ! -e "$root/usr/lib/criu" ] || fail "rtid-criu-plugin puts something in CRIU's /usr/lib/criu"
	nm -D --defined-only "$so" | grep -q ' CR_PLUGIN_DESC$' || fail "cuda_plugin.so is no CRIU plugin"
	built=$(strings "$so" | sed -n 's/^initialized: stage %d, built for CRIU \([0-9.]*\), .*/\1/p')
	[ -n "$built" ] || fail "cuda_plugin.so does not say which CRIU it was built for"
	dpkg-deb -f "$plugin_deb" Description | grep -q "CRIU ${built}[ ,]" ||
		fail "rtid-criu-plugin's description does not name CRIU $built: $(dpkg-deb -f "$plugin_deb" Description)"
	deps=$(dpkg-deb -f "$plugin_deb" Depends Pre-Depends)
	echo "$deps" | grep -q 'criu' && fail "rtid-criu-plugin depends on a criu package: $deps"
	echo "deb: rtid-criu-plugin holds the plugin for CRIU $built"
else
	[ -z "$plugin_deb" ] || fail "rtid-criu-plugin built without CRIU's source: $plugin_deb"
	echo "deb: no rtid-criu-plugin (no CRIU source)"
fi

# Every guide a packaged manual page names (rtid-cuda-plugin(8)'s too) is in
# the packages.
named=$(zcat "$root"/usr/share/man/man*/*.gz |
	grep -o '/usr/share/doc/rtid/[A-Za-z0-9_.-][A-Za-z0-9_.-]*' | sort -u)
[ -n "$named" ] || fail "the manual pages name no guide in /usr/share/doc/rtid"
for d in $named; do
	[ -f "$root$d" ] || fail "a manual page names $d, which no package installs"
done

cat > "$root/w.case" <<CASE
title  the packaged rtid asks the mock driver
proves the packages hold a working CLI, library and worker
task   $pid $pid sleep
answer $pid tid $pid
expect driver $pid tid=$pid
CASE
out=$(RTID_CASE="$root/w.case" "$root/usr/bin/rtid" resolve --backend api --libcuda "$mock" \
	--json "$pid") || fail "packaged rtid, api backend: $out"
echo "$out" | grep -q "\"tid\": *$pid" || fail "packaged rtid answered: $out"
echo "deb: packages work from a scratch root ($v)"
