#!/usr/bin/env bash
# cli_examples.sh MPSIM REPO_ROOT - every shipped experiment file validates.
#
# examples/*.yaml and experiments/**/*.yaml must each pass `mpsim validate`: exit 0,
# "FILE: ok (...)" on stdout (a line per point for a sweep), nothing on stderr. They are validated from an
# unrelated working directory, so paths inside them (CDF tables, flow files) must be
# relative to the experiment file, not to where mpsim happens to be started.
# The Chakra traces the training examples read are written first.
# And the folders' READMEs (experiments/*/README.md) show a figure of every experiment file, each link to a
# file that exists (scripts/experiment_plots.sh --check).
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"

# The training examples' Chakra traces are generated, not shipped: written
# here as their files say (scripts/training_trace.py, deterministic), into
# examples/traces/, which git ignores.
python3 "$ROOT/scripts/training_trace.py" dense "$ROOT/examples/traces/dense_128" >/dev/null
python3 "$ROOT/scripts/training_trace.py" moe "$ROOT/examples/traces/moe_512" --hidden 1024 --ffn 2048 >/dev/null

files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
	{
		find "$ROOT/examples" -maxdepth 1 -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 2>/dev/null
		find "$ROOT/experiments" -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 2>/dev/null
	} | sort -z)

nexamples=0
for f in ${files[@]+"${files[@]}"}; do
	[[ $f == "$ROOT/examples/"* ]] && nexamples=$((nexamples + 1))
done
if ((nexamples == 0)); then
	echo "FAIL: no examples/*.yaml in $ROOT (expected at least one)" >&2
	exit 1
fi

for f in "${files[@]}"; do
	rel=${f#"$ROOT"/}
	set +e
	"$MPSIM" validate "$f" >out 2>err
	rc=$?
	set -e
	if [[ $rc != 0 ]]; then
		fail "$rel" "exit 0" "exit $rc: $(cat err)"
		continue
	fi
	# one line per sweep point: "FILE key=value ...: ok (...)" (no grep -q after a
	# pipe: it exits at the first match and, under pipefail, the writer's SIGPIPE
	# fails the check once the output is long, as a 96-point sweep's is)
	grep -F -- "$f" out | grep -F ': ok (' >/dev/null ||
		fail "$rel" "'$f[ point]: ok (...)' on stdout" "$(cat out)"
	[[ ! -s err ]] || fail "$rel" "nothing on stderr" "$(cat err)"
	# validate writes nothing
	for x in "$T"/* "$T"/.[!.]*; do
		[[ -e $x && $x != "$T/out" && $x != "$T/err" ]] &&
			fail "$rel" "validate to write nothing" "$(ls -A "$T")"
	done
done

out=$("$ROOT/scripts/experiment_plots.sh" --check 2>&1) ||
	fail "experiments/*/README.md figures" "a figure of every experiment, every link resolved" "$out"

# The README names every Debian package that `make test` installs (a new user
# learns from it what the test suite puts on their machine).
for flag in "" --test; do
	pkgs=$(sed -n 's/^need=(\(.*\))$/\1/p' "$ROOT/scripts/deps.sh")
	[[ -n $flag ]] && pkgs+=" $(sed -n "s/^ *$flag) need+=(\(.*\)) ;;$/\1/p" "$ROOT/scripts/deps.sh")"
	for p in $pkgs; do
		grep -qw -- "$p" "$ROOT/README.md" ||
			fail "README.md" "names $p, which scripts/deps.sh ${flag:-(make demo)} installs" "not named"
	done
done

finish "${#files[@]} experiment file(s) validate"
