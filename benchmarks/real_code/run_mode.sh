#!/bin/bash
# Run one real project's tests or script in one mode, for docs/real-code.md.
# usage: run_mode.sh LABEL pytest|script MODE DIR [arguments...]
#   pytest: `python -m pytest ARGUMENTS` in DIR; script: `python ARGUMENTS` in DIR (a script and its options)
#   MODE: plain (no doctor), default, full, strict
# Environment: OUT (folder for LABEL-MODE.txt and, for pytest, LABEL-MODE.xml), PYTHON (the interpreter),
# PYTHONPATH (this checkout's src first, then the project and its packages), TMO (seconds, default 900).
# The last line of LABEL-MODE.txt is "rc=EXIT secs=WALL" then "cpu=USER+SYSTEM"; compare.py reads the files.
label=$1; kind=$2; mode=$3; dir=$4; shift 4
PYTHON=${PYTHON:-python}
TIMEFORMAT='cpu=%U+%S'  # the script's CPU seconds (user+system), steadier than wall time on a loaded machine
export OMP_NUM_THREADS=1 MPLBACKEND=Agg
unset AUTOGRAD_DOCTOR_MODE AUTOGRAD_DOCTOR
cd "$dir" || exit 2
start=$(date +%s.%N)
if [ "$kind" = pytest ]; then
  case $mode in
    plain) flags="-p no:autograd_doctor";;
    default) flags="--autograd-doctor";;
    full) flags="--autograd-doctor"; export AUTOGRAD_DOCTOR_MODE=full;;
    strict) flags="--autograd-doctor-strict";;
  esac
  { time timeout -s INT -k 30 "${TMO:-900}" $PYTHON -m pytest -p no:cacheprovider -q -rfE -W default \
    --junitxml="$OUT/$label-$mode.xml" $flags "$@" > "$OUT/$label-$mode.txt" 2>&1 ; } 2> "$OUT/$label-$mode.cpu"
else
  case $mode in
    plain) command="$PYTHON";;
    default) command="$PYTHON -m autograd_doctor run";;
    full) command="$PYTHON -m autograd_doctor run --full";;
    strict) command="$PYTHON -m autograd_doctor run --strict";;
  esac
  { time timeout -s INT -k 30 "${TMO:-900}" $command "$@" > "$OUT/$label-$mode.txt" 2>&1 ; } 2> "$OUT/$label-$mode.cpu"
fi
rc=$?
echo "rc=$rc secs=$(python3 -c "import time; print(round(time.time() - $start, 1))") $(cat "$OUT/$label-$mode.cpu" 2>/dev/null)" >> "$OUT/$label-$mode.txt"
rm -f "$OUT/$label-$mode.cpu"
