#!/bin/sh
# meson install's last step in a build whose defaults are under its own tree
# (-Ddefaults=build, what auto gives a build with tests): its programs would
# look for the daemon's socket, the shim's settings and the attestation there,
# not in /run/rtid, /etc/rtid and /var/lib/rtid, so the install is refused.
# The install test (tests/install/install.sh), which installs the test build
# into a scratch root, says RTID_INSTALL_TEST_DEFAULTS=1.
# Usage: install-guard.sh NODE_ROOT
[ "${RTID_INSTALL_TEST_DEFAULTS:-}" = 1 ] && exit 0
cat >&2 <<MSG
rtid: this build compiled its default paths under $1 for its tests
(-Ddefaults=build, or auto with the tests built): installed, it would not find
the daemon's socket, /etc/rtid or /var/lib/rtid. Configure the build to install
with -Ddefaults=node (or -Dtests=disabled) and install again.
MSG
exit 1
