#!/usr/bin/env bash
# `make test` after set-up, scheduled on the machine's two cores:
#   lane A  the strict book build (--all -W -n --keep-going, the papers' settings), then the PDF
#           from the outputs the build just cached, then the chapters' .ipynb copies in the site;
#   lane B  every chapter under nbval (--nbval-lax, the .md files run in place through
#           chapters/conftest.py, with MICROAGG_QUICK=1), then every test that needs no build:
#           `pytest tests microagg --doctest-modules -m "not after_build"` (unit tests,
#           docstring examples, CLI, Dask, course, plain install, ...);
#   then    once lane A is done, the tests marked `after_build` (they read _build/ or write in
#           chapters/): tests/site turns lane A's and nbval's exit codes into test results (so
#           a failing build or chapter fails the run) and checks the built pages in headless
#           Chromium; the PDF, the built ledger, JupyterLab. Two pytest processes: the axe-core
#           sweep, and the rest.
# Every step logs to _build/logs/ (exit codes in *.rc); the pytest summaries come last, and the
# run fails if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
LOGS=_build/logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
t0=$(date +%s)
since() { echo "$(( $(date +%s) - $1 )) s"; }
export MICROAGG_PHASE1_LOGS="$LOGS" MICROAGG_ASSIGNMENTS_OUT=_build/assignments
PYTEST=("$BIN/pytest" -p no:cacheprovider -ra --durations=5)

# The chapters to run under nbval: the notebooks listed in _toc.yml (a broken toc is reported
# by tests/site as well; here it leaves the list empty, which nbval's check also reports).
"$BIN/python" tools/toc.py --notebooks > "$LOGS/chapters.txt" 2> "$LOGS/toc.err" \
  || { echo "   _toc.yml: $(tail -n 1 "$LOGS/toc.err")"; : > "$LOGS/chapters.txt"; }
mapfile -t chapters < "$LOGS/chapters.txt"
echo "== lane A: strict book build, PDF | lane B: ${#chapters[@]} chapters under nbval, then" \
     "the tests that need no build"

(  # lane A
  s=$(date +%s)
  "$BIN/jupyter-book" build . --all -W -n --keep-going > "$LOGS/book.log" 2>&1
  echo $? > "$LOGS/book.rc"
  echo "   book build: exit $(cat "$LOGS/book.rc") after $(since "$s") (log: $LOGS/book.log)"
  # The PDF (`make pdf`) from the outputs the strict build recorded in the execution cache
  # (tools/book_ext.py): no chapter runs again. Skipped when the strict build failed (its
  # failing chapter would only run again here).
  s=$(date +%s)
  if [ "$(cat "$LOGS/book.rc")" = 0 ]; then
    "$BIN/jupyter-book" build . --all --builder pdflatex > "$LOGS/pdf.log" 2>&1
    echo $? > "$LOGS/pdf.rc"
    echo "   PDF build: exit $(cat "$LOGS/pdf.rc") after $(since "$s") (log: $LOGS/pdf.log)"
  else
    echo "skipped: the strict book build failed" > "$LOGS/pdf.log"
    echo skipped > "$LOGS/pdf.rc"
  fi
  if [ -d _build/html ]; then
    "$BIN/python" tools/export_notebooks.py _build/html >> "$LOGS/book.log" 2>&1 \
      || echo "   notebook export failed (see $LOGS/book.log)"
  fi
) &
lane_a=$!

(  # lane B
  s=$(date +%s)
  if [ ${#chapters[@]} -gt 0 ]; then
    # MICROAGG_QUICK=1: the one switch that lets this quick check run the papers' heaviest
    # reproductions at reduced settings (the strict build in lane A runs the papers' settings).
    MICROAGG_QUICK=1 "$BIN/pytest" -p no:cacheprovider --nbval-lax --nbval-current-env \
      --nbval-cell-timeout=600 -v "${chapters[@]}" > "$LOGS/nbval.log" 2>&1
    echo $? > "$LOGS/nbval.rc"
  else
    echo "no chapter notebooks found from _toc.yml" > "$LOGS/nbval.log"; echo 5 > "$LOGS/nbval.rc"
  fi
  echo "   nbval: exit $(cat "$LOGS/nbval.rc") after $(since "$s") (log: $LOGS/nbval.log)"
  s=$(date +%s)
  "${PYTEST[@]}" tests microagg --doctest-modules -m "not after_build" \
    > "$LOGS/pytest-unit.log" 2>&1
  echo $? > "$LOGS/pytest-unit.rc"
  echo "   tests that need no build: exit $(cat "$LOGS/pytest-unit.rc") after $(since "$s")" \
       "(log: $LOGS/pytest-unit.log)"
) &
lane_b=$!

wait "$lane_a"
for step in book pdf; do
  rc=$(cat "$LOGS/$step.rc")
  if [ "$rc" != 0 ] && [ "$rc" != skipped ]; then
    echo "-- last lines of $LOGS/$step.log:"
    tail -n 25 "$LOGS/$step.log" | sed 's/^/   /'
  fi
done
# tests/site reads nbval's exit code: lane B has written it long before lane A ends, as a rule
while [ ! -e "$LOGS/nbval.rc" ] && kill -0 "$lane_b" 2>/dev/null; do sleep 2; done
echo "== after the build ($(since "$t0") in): the tests marked after_build, in two processes"
s=$(date +%s)
"${PYTEST[@]}" -m after_build tests/site/test_accessibility.py > "$LOGS/pytest-axe.log" 2>&1 &
axe=$!
"${PYTEST[@]}" -m after_build tests --ignore=tests/site/test_accessibility.py \
  > "$LOGS/pytest-site.log" 2>&1
echo $? > "$LOGS/pytest-site.rc"
wait "$axe"; echo $? > "$LOGS/pytest-axe.rc"
echo "   after-build tests: done after $(since "$s")"
wait "$lane_b"

status=0
for step in nbval pytest-unit pytest-site pytest-axe; do
  rc=$(cat "$LOGS/$step.rc" 2>/dev/null || echo missing)
  if [ "$step" != nbval ]; then
    echo "== $step ($LOGS/$step.log)"
    # everything after the progress dots: failures, the tests' own summaries (axe's count of
    # violations), the slowest tests, the short summary, the totals
    if grep -q '\[100%\]$' "$LOGS/$step.log"; then
      sed -n '/\[100%\]$/,$p' "$LOGS/$step.log" | tail -n +2
    else
      tail -n 30 "$LOGS/$step.log"
    fi
    # pytest's "no tests collected" (exit 5) must never pass as success
    [ "$rc" = 5 ] && echo "   collected no tests (exit 5): treated as a failure"
  fi
  [ "$rc" = 0 ] || status=1
done
for step in nbval book pdf; do
  rc=$(cat "$LOGS/$step.rc" 2>/dev/null || echo missing)
  [ "$rc" = 0 ] || { echo "   $step: exit $rc (see $LOGS/$step.log)"; status=1; }
done
echo "== make test: $( [ $status = 0 ] && echo passed || echo FAILED ) after $(since "$t0")"
exit "$status"
