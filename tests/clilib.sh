# clilib.sh - what every command-line test (tests/cli_*.sh) starts with:
# its two arguments made absolute, a scratch folder as the working directory
# (removed on exit), and the helpers that run mpsim and count failed checks.
#   source "$(dirname "$0")/clilib.sh" "$@"
# A script that starts processes of its own names them in cli_cleanup, which
# runs before the scratch folder is removed; it ends with `finish`.
# Not a test itself: tests/tests.cmake runs the files named cli_*.sh.
set -euo pipefail

CLI_NAME=$(basename "$0" .sh)
MPSIM=${1:?usage: $CLI_NAME.sh MPSIM REPO_ROOT}
ROOT=${2:?usage: $CLI_NAME.sh MPSIM REPO_ROOT}
[[ -d $ROOT ]] || {
	echo "$CLI_NAME: no repository at $ROOT" >&2
	exit 1
}
MPSIM=$(cd "$(dirname "$MPSIM")" && pwd)/$(basename "$MPSIM")
ROOT=$(cd "$ROOT" && pwd)

T=$(mktemp -d)
cli_cleanup() { :; }
trap 'cli_cleanup; rm -rf "$T"' EXIT
cd "$T"

nfail=0
fail() { # fail WHAT EXPECTED GOT
	printf 'FAIL [%s]\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3" >&2
	nfail=$((nfail + 1))
}
# run WHAT ARGS...: mpsim ARGS; status in $rc, stdout in WHAT.out, stderr in WHAT.err
run() {
	local what=$1
	shift
	set +e
	"$MPSIM" "$@" >"$what.out" 2>"$what.err"
	rc=$?
	set -e
}
# refused WHAT STATUS TEXT ARGS...: mpsim ARGS exits STATUS, says TEXT on stderr,
# prints nothing on stdout (nothing ran)
refused() {
	local what=$1 want=$2 text=$3
	shift 3
	run "$what" "$@"
	[[ $rc == "$want" ]] || fail "$what" "exit $want" "exit $rc: $(head -c 600 "$what.err")"
	grep -qF -- "$text" "$what.err" || fail "$what" "a sentence with '$text'" "$(head -c 600 "$what.err")"
	[[ ! -s $what.out ]] || fail "$what" "nothing on stdout (refused before the run)" "$(head -c 300 "$what.out")"
}
# finish [SUMMARY]: the closing line and the exit status (1 when a check failed)
finish() {
	if ((nfail)); then
		echo "$CLI_NAME: $nfail check(s) failed" >&2
		exit 1
	fi
	echo "$CLI_NAME: ${1:-all checks passed}"
	exit 0
}
