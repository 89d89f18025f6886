#!/bin/sh
# The words every command says alike: each error begins "rtid CMD: " (getopt's
# included, which used to say only "resolve:" or "status:"), and every
# command and subcommand takes --help (exit 0, the usage on stdout), where
# "rtid attest lift --help" used to exit 2.
set -eu
rtid=$RTID_BIN
fail() { echo "words: FAIL: $*" >&2; exit 1; }
for c in resolve validate attest serve "serve status" doctor; do
	# shellcheck disable=SC2086 # "serve status" is two words
	out=$("$rtid" $c --bogus-option 2>&1 >/dev/null) && fail "rtid $c took a bogus option"
	case $out in "rtid $c: "*) ;; *) fail "rtid $c's error does not begin 'rtid $c: ': $out" ;; esac
done
for c in resolve validate attest "attest show" "attest merge" "attest lift" serve "serve status" doctor; do
	# shellcheck disable=SC2086
	out=$("$rtid" $c --help) || fail "rtid $c --help exited $?"
	case $out in *Usage:*) ;; *) fail "rtid $c --help printed no usage: $out" ;; esac
done
"$rtid" serve --version | grep -q "^rtid " || fail "rtid serve --version"
# rtid attest without a subcommand, or with a word it does not take: said so.
out=$("$rtid" attest 2>&1) && fail "rtid attest alone exited 0"
case $out in "rtid attest: show, merge or lift?"*) ;; *) fail "rtid attest alone: $out" ;; esac
out=$("$rtid" attest show a b 2>&1) && fail "rtid attest show with two files exited 0"
case $out in "rtid attest: 'b' is no subcommand or option here"*) ;; *) fail "rtid attest show a b: $out" ;; esac
echo "words: one prefix for every command's errors; --help everywhere"
