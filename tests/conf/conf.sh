#!/bin/sh
# One settings file for every command: rtid resolve, validate and serve
# status read the shim's settings file (RTID_SHIM_CONF) as the shim does,
# the environment over the file; RTID_REAL_TOOL is the real tool's one name,
# its old name RTID_CUDA_CHECKPOINT taken where it is unset; validate makes
# the attestation's directory, never through a link; doctor fails a settings
# file naming another socket than rtid.socket's; a misspelt name is quoted.
#   conf.sh RTID_BIN
set -eu
rtid=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM HUP
fail() { echo "conf: FAIL: $*" >&2; exit 1; }
unset RTID_REAL_TOOL RTID_CUDA_CHECKPOINT RTID_SOCKET RTID_ATTESTATION RTID_MODE RTID_BACKEND
export RTID_SHIM_CONF="$T/shim.conf"

# Tools that say who answered: each prints a tid (its own pid's) and its name.
for t in file env old; do
	printf '#!/bin/sh\necho %s >> "%s/who"\necho "$3"\n' "$t" "$T" > "$T/tool-$t"
	chmod 0755 "$T/tool-$t"
done
who() { rm -f "$T/who"; "$rtid" resolve "$@" $$ >/dev/null 2>&1 || true; cat "$T/who" 2>/dev/null; }
conf() { printf '%s\n' "$@" > "$T/shim.conf"; chmod 0644 "$T/shim.conf"; }

conf "RTID_REAL_TOOL=$T/tool-file"
[ "$(who)" = file ] || fail "rtid resolve did not run the settings file's RTID_REAL_TOOL"
[ "$(RTID_REAL_TOOL=$T/tool-env who)" = env ] || fail "the environment's RTID_REAL_TOOL lost to the file"
[ "$(RTID_CUDA_CHECKPOINT=$T/tool-old who)" = old ] ||
	fail "the environment's RTID_CUDA_CHECKPOINT lost to the file's RTID_REAL_TOOL"
[ "$(RTID_REAL_TOOL=$T/tool-env RTID_CUDA_CHECKPOINT=$T/tool-old who)" = env ] ||
	fail "with both set, RTID_REAL_TOOL did not win"
[ "$(who --tool "$T/tool-env")" = env ] || fail "--tool lost to the settings file"
conf "RTID_CUDA_CHECKPOINT=$T/tool-old"
[ "$(who)" = old ] || fail "the file's RTID_CUDA_CHECKPOINT (the old name) not taken"
conf "RTID_CUDA_CHECKPOINT=$T/tool-old" "RTID_REAL_TOOL=$T/tool-file"
[ "$(who)" = file ] || fail "in the file, the old name won over RTID_REAL_TOOL"
echo "conf: resolve takes the file's real tool; environment, then RTID_REAL_TOOL, win"

# A misspelt name is said, quoted, and the rest of the file still read.
conf "RTID_REAL_TOOOL=/x" "RTID_REAL_TOOL=$T/tool-file"
rm -f "$T/who"
err=$("$rtid" resolve $$ 2>&1 >/dev/null) || true
case $err in *"shim.conf:1: not a setting: 'RTID_REAL_TOOOL'"*) ;;
	*) fail "a misspelt name not quoted: $err" ;; esac
[ "$(cat "$T/who")" = file ] || fail "a bad line stopped the file"

# rtid serve status asks the socket the file names.
conf "RTID_SOCKET=$T/named.sock"
out=$("$rtid" serve status 2>&1) && fail "serve status with no daemon passed"
case $out in *"$T/named.sock"*) ;; *) fail "serve status did not ask the file's socket: $out" ;; esac
out=$(RTID_SOCKET="$T/env.sock" "$rtid" serve status 2>&1) || true
case $out in *"$T/env.sock"*) ;; *) fail "serve status: the environment lost to the file: $out" ;; esac
echo "conf: serve status asks the socket the settings file names"

# rtid validate makes the attestation's directory, 0755, never through a link.
conf "RTID_REAL_TOOL=$T/tool-file"
umask 077
"$rtid" validate --driver-version 550.54.14 --report "$T/r.json" \
	--attestation "$T/lib/attestation.json" $$ >/dev/null 2>&1 || true
[ -f "$T/lib/attestation.json" ] || fail "validate did not make the attestation's directory"
[ "$(stat -c %a "$T/lib")" = 755 ] || fail "the directory is $(stat -c %a "$T/lib"), not 755"
mkdir "$T/elsewhere"
ln -s "$T/elsewhere" "$T/link"
out=$("$rtid" validate --driver-version 550.54.14 --report "$T/r2.json" \
	--attestation "$T/link/attestation.json" $$ 2>&1) && fail "validate wrote through a link: $out"
[ -z "$(ls "$T/elsewhere")" ] || fail "validate wrote through a link"
case $out in *"not followed"*) ;; *) fail "the link refused without saying so: $out" ;; esac
umask 022
echo "conf: validate makes the attestation's directory (0755), never through a link"

# doctor: under socket activation the settings file must name rtid.socket's
# socket (the tree's own file, under --root; both paths as the tree has them).
r=$T/root
mkdir -p "$r/run/systemd/system" "$r/usr/lib/systemd/system" "$r/etc/rtid"
printf '[Socket]\nListenSequentialPacket=/run/rtid/rtid.sock\n' > "$r/usr/lib/systemd/system/rtid.socket"
printf 'RTID_SOCKET=/run/other.sock\n' > "$r/etc/rtid/shim.conf"
"$rtid" doctor --root "$r" > "$T/d.txt" 2>&1 || true
grep -q "^FAIL  socket-unit: rtid.socket listens on /run/rtid/rtid.sock; the shim and rtid ask /run/other.sock" "$T/d.txt" ||
	fail "doctor did not flag a settings file naming another socket: $(cat "$T/d.txt")"
mkdir -p "$r/etc/systemd/system/rtid.socket.d"
printf '[Socket]\nListenSequentialPacket=\nListenSequentialPacket=/run/other.sock\n' \
	> "$r/etc/systemd/system/rtid.socket.d/override.conf"
"$rtid" doctor --root "$r" > "$T/d.txt" 2>&1 || true
grep -q "^ok    socket-unit" "$T/d.txt" || fail "doctor did not take the drop-in's socket: $(cat "$T/d.txt")"
echo "conf: doctor checks the settings file's socket against rtid.socket's"
