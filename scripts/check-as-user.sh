#!/bin/sh
# The unit and case suites as a normal user would run them (make
# check-as-user, and CI): run as root, it makes an unprivileged user, clones
# this tree into a directory that user owns, makes /dev/fuse usable as on a
# desktop (0666, fusermount3 setuid as Debian ships it), then builds and runs
#   meson test --suite unit --suite cases
# as that user, with RTID_REQUIRE_FUSE=1 (the cases must run, not skip) and
# none of the requirements only root can meet (CRIU, the engines), so that
# those tests skip and say why. Every way out puts /dev/fuse back, takes down
# what the user left mounted or running, and removes the clone.
#
#   check-as-user.sh [USER]      (default rtid-check; made if missing, and
#                                 then removed with what it left)
#
# It runs the committed tree (HEAD), as CI's clean clone does.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
user=${1:-rtid-check}
[ "$(id -u)" = 0 ] || { echo "check-as-user: run as root (it makes a user and opens /dev/fuse to it)" >&2; exit 1; }
command -v runuser > /dev/null || { echo "check-as-user: no runuser (util-linux)" >&2; exit 1; }
[ -u /usr/bin/fusermount3 ] || { echo "check-as-user: /usr/bin/fusermount3 is not setuid (apt-get install fuse3)" >&2; exit 1; }

made_user=""
if ! id -u "$user" > /dev/null 2>&1; then
	useradd --create-home --shell /bin/sh "$user"
	made_user=1
fi
dir=$(mktemp -d /tmp/rtid-as-user.XXXXXX)
fuse_mode=""
[ -e /dev/fuse ] && fuse_mode=$(stat -c %a /dev/fuse)

restore() {
	rc=$?
	trap - EXIT INT TERM HUP
	uid=$(id -u "$user" 2> /dev/null || echo none)
	# What a killed test left: the user's processes (a user made here only)
	# and FUSE mounts (fakeproc's, stuck-fs's: user_id= is the mounter's).
	[ -n "$made_user" ] && pkill -KILL -u "$user" 2> /dev/null
	awk -v u="user_id=$uid," '$3 ~ /^fuse/ && $4 ~ u { print $2 }' /proc/self/mounts |
		while read -r mnt; do umount -l "$mnt" 2> /dev/null || true; done
	[ -n "$fuse_mode" ] && chmod "$fuse_mode" /dev/fuse
	rm -rf "$dir"
	if [ -n "$made_user" ]; then
		find /tmp -maxdepth 1 -user "$user" -exec rm -rf {} + 2> /dev/null
		userdel --remove "$user" 2> /dev/null
	fi
	exit "$rc"
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

chmod 0755 "$dir"
git clone --quiet --no-local "$src" "$dir/rtid"
chown -R "$user:" "$dir"
[ -n "$fuse_mode" ] && chmod 0666 /dev/fuse

echo "check-as-user: the unit and case suites as $user (uid $(id -u "$user")) in $dir/rtid"
# A clean environment, as a user's login gives: no requirement only root can
# meet, the FUSE one kept.
runuser -u "$user" -- env -i HOME="$(getent passwd "$user" | cut -d: -f6)" USER="$user" \
	LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
	RTID_REQUIRE_FUSE=1 RTID_REQUIRE_CRIU=0 \
	sh -c 'cd "$1" && meson setup build -Dwerror=true > setup.log 2>&1 || { cat setup.log; exit 1; }
		ninja -C build > ninja.log 2>&1 || { tail -50 ninja.log; exit 1; }
		rc=0
		meson test -C build --print-errorlogs --suite unit --suite cases || rc=$?
		python3 scripts/skipped.py build/meson-logs/testlog.json
		exit $rc' sh "$dir/rtid"
