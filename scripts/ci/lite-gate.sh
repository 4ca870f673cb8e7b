#!/usr/bin/env bash
# Example CI job step: gate a model with a lite recipe. Runs `lite run RECIPE`, keeps the JSON report, the JUnit
# file of the gates (OUT/NAME.junit.xml, for the CI system's test reporter) and the final artifact, appends the markdown summary to $GITHUB_STEP_SUMMARY when set (GitHub Actions shows it on the
# run's page; elsewhere it is printed), and exits with lite's status: 0 every gate passed, 1 a gate failed (the
# job fails; the artifact is still written for inspection), 2 the recipe or an input is invalid.
#   usage: scripts/ci/lite-gate.sh RECIPE.json
#   env:   LITE (the lite command, default: lite on PATH), LITE_GATE_OUT (output folder, default: lite-gate)
set -uo pipefail
recipe=${1:?usage: lite-gate.sh RECIPE.json}
lite=${LITE:-lite}
out=${LITE_GATE_OUT:-lite-gate}
name=$(basename "$recipe" .json)
mkdir -p "$out"
"$lite" run "$recipe" -o "$out/$name.pt" --report-md "$out/$name.md" --junit "$out/$name.junit.xml" --json \
  > "$out/$name.report.json"
status=$?
if [ -f "$out/$name.md" ]; then
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$out/$name.md" >> "$GITHUB_STEP_SUMMARY"
  else
    cat "$out/$name.md"
  fi
fi
case $status in
  0) echo "lite-gate: $name: every gate passed ($out/$name.pt)" ;;
  1) echo "lite-gate: $name: gate failed: $(/usr/bin/env python3 -c 'import json,sys; print(", ".join(json.load(open(sys.argv[1]))["result"]["failed_gates"]))' "$out/$name.report.json" 2>/dev/null || echo see the summary)" >&2 ;;
  *) echo "lite-gate: $name: lite run exited $status (invalid recipe or input, or interrupted)" >&2 ;;
esac
exit $status
