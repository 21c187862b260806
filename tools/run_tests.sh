#!/usr/bin/env bash
# `make test` after set-up. Two phases, so that the last thing printed is pytest's summary:
#   1. in parallel (one core each): every chapter under nbval (--nbval-lax, the .md files run in
#      place through chapters/conftest.py, with MICROAGG_QUICK=1) and the strict book build
#      (--all -W -n --keep-going, the papers' settings), then the PDF from the build's cached
#      outputs; logs and exit codes go to _build/logs/.
#   2. `pytest tests microagg --doctest-modules`: the unit tests, the docstring examples, and
#      tests/site/, which turns phase 1's exit codes into test results (so a failing build or
#      chapter fails this run) and checks the built pages in headless Chromium.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
LOGS=_build/logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
t0=$(date +%s)

# The chapters to run under nbval: the notebooks listed in _toc.yml (a broken toc is reported
# by tests/site as well; here it leaves the list empty, which nbval's check also reports).
"$BIN/python" tools/toc.py --notebooks > "$LOGS/chapters.txt" 2> "$LOGS/toc.err" \
  || { echo "   _toc.yml: $(tail -n 1 "$LOGS/toc.err")"; : > "$LOGS/chapters.txt"; }
mapfile -t chapters < "$LOGS/chapters.txt"
echo "== phase 1: ${#chapters[@]} chapters under nbval, in parallel with the strict book build"

(
  s=$(date +%s)
  if [ ${#chapters[@]} -gt 0 ]; then
    # MICROAGG_QUICK=1: the one switch that lets this quick check run the papers' heaviest
    # reproductions at reduced settings (the strict build below runs the papers' settings).
    MICROAGG_QUICK=1 "$BIN/pytest" -p no:cacheprovider --nbval-lax --nbval-current-env \
      --nbval-cell-timeout=600 -v "${chapters[@]}" > "$LOGS/nbval.log" 2>&1
    rc=$?
  else
    echo "no chapter notebooks found from _toc.yml" > "$LOGS/nbval.log"; rc=5
  fi
  echo "$rc" > "$LOGS/nbval.rc"
  echo "   nbval: exit $rc after $(( $(date +%s) - s )) s (log: $LOGS/nbval.log)"
) &
nbval_pid=$!

s=$(date +%s)
"$BIN/jupyter-book" build . --all -W -n --keep-going > "$LOGS/book.log" 2>&1
rc=$?
echo "$rc" > "$LOGS/book.rc"
echo "   book build: exit $rc after $(( $(date +%s) - s )) s (log: $LOGS/book.log)"
# The PDF (`make pdf`), from the outputs the strict build just recorded in the execution
# cache (tools/book_ext.py): no chapter runs again. tests/test_publishing.py reads its text.
# Skipped when the strict build failed (its failing chapter would only run again here).
s=$(date +%s)
if [ "$(cat "$LOGS/book.rc")" = 0 ]; then
  "$BIN/jupyter-book" build . --all --builder pdflatex > "$LOGS/pdf.log" 2>&1
  rc=$?
  echo "   PDF build: exit $rc after $(( $(date +%s) - s )) s (log: $LOGS/pdf.log)"
else
  rc=skipped
  echo "skipped: the strict book build failed" > "$LOGS/pdf.log"
fi
echo "$rc" > "$LOGS/pdf.rc"
wait "$nbval_pid"

if [ -d _build/html ]; then
  "$BIN/python" tools/export_notebooks.py _build/html >> "$LOGS/book.log" 2>&1 \
    || echo "   notebook export failed (see $LOGS/book.log)"
fi
for step in nbval book pdf; do
  if [ "$(cat "$LOGS/$step.rc")" != 0 ] && [ "$(cat "$LOGS/$step.rc")" != skipped ]; then
    echo "-- last lines of $LOGS/$step.log:"
    tail -n 25 "$LOGS/$step.log" | sed 's/^/   /'
  fi
done
echo "== phase 1 done after $(( $(date +%s) - t0 )) s"

echo "== phase 2: pytest (unit tests, docstring examples, phase-1 results, browser check)"
# (tests/test_assignments.py builds the course assignments into _build/assignments and checks them)
MICROAGG_PHASE1_LOGS="$LOGS" MICROAGG_ASSIGNMENTS_OUT=_build/assignments \
  "$BIN/pytest" tests microagg --doctest-modules -ra --durations=10
rc=$?
if [ "$rc" = 5 ]; then
  # pytest's "no tests collected" must never pass as success.
  echo "pytest collected no tests (exit 5): treated as a failure" >&2
  exit 1
fi
exit "$rc"
