#!/bin/bash
# The bash completion as bash-completion loads it: sourced into bash, then
# asked as the shell asks on TAB (COMP_WORDS, COMP_CWORD, compgen inside):
# the subcommands, serve's status, the modes, the options of each command,
# and every long option that a command's --help lists is offered.
#
#   completion.sh COMPLETION_FILE RTID_BIN
set -u
file=$1 rtid=$2
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || { echo "skipped: bash-completion is not installed ($bc)"; exit 77; }
# shellcheck disable=SC1090
. "$bc"
# shellcheck disable=SC1090
. "$file"
fail() { echo "completion: FAIL: $*" >&2; exit 1; }

# What TAB offers after the words given (the last one is being typed).
offers() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_rtid rtid "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort
}
is() { # WANT WORDS...: exactly these offers, space-separated
	local want=$1
	shift
	got=$(offers "$@" | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "${*}<TAB>: '$got', not '$want '"
}
has() { # WANT WORDS...: WANT among the offers
	local want=$1
	shift
	offers "$@" | grep -qx -- "$want" || fail "${*}<TAB> lacks $want"
}

[ "$(complete -p rtid)" = "complete -F _rtid rtid" ] || fail "not registered for rtid"
is "serve" rtid se
is "resolve" rtid res
is "status" rtid serve st
is "--prometheus" rtid serve status --pro
is "crosscheck" rtid resolve --mode cr
is "show" rtid attest sh
is "--root" rtid doctor --ro
has "$$" rtid resolve ""  # a pid: this shell's
has "$$" rtid validate --json ""

# Every long option of each command's --help is offered there.
for cmd in "resolve" "validate" "serve" "serve status" "doctor"; do
	# shellcheck disable=SC2086
	opts=$("$rtid" $cmd --help | grep -oE '^ +(-[a-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' |
		sort -u)
	[ -n "$opts" ] || fail "rtid $cmd --help lists no option"
	for o in $opts; do
		# shellcheck disable=SC2086
		has "$o" rtid $cmd --
	done
done
echo "completion: subcommands, values and every option of --help offered"
