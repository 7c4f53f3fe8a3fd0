#!/usr/bin/env bash
# Installs the Debian packages mpsim needs when they are missing (as root), or
# says which apt-get line to run. Used by `make demo`, `make test` and .ci/run.
#   scripts/deps.sh            build dependencies and gnuplot (the plots of every run)
#   scripts/deps.sh --test     also cmocka, Open MPI and python3 (the unit tests,
#                              the test of a sweep over MPI ranks, the Chakra test
#                              traces' writer; `make test`, the CI)
#   scripts/deps.sh --mpi      also Open MPI (`mpirun -n N mpsim run FILE` spreads a
#                              sweep's points over ranks; rebuild after installing)
#   scripts/deps.sh --optional also cmocka and valgrind
#   scripts/deps.sh --fuzz     also clang and its libFuzzer runtime (make fuzz)
set -euo pipefail
need=(build-essential cmake pkg-config libyaml-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev gnuplot-nox)
case "${1:-}" in
  --test) need+=(libcmocka-dev openmpi-bin libopenmpi-dev python3) ;;
  --mpi) need+=(openmpi-bin libopenmpi-dev) ;;
  --optional) need+=(libcmocka-dev valgrind) ;;
  # libFuzzer ships in compiler-rt: libclang-rt-dev follows the default clang
  --fuzz) need+=(clang libclang-rt-dev) ;;
esac
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "mpsim: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "mpsim: missing Debian packages; run:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
