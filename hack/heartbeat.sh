#!/usr/bin/env bash
# heartbeat.sh LABEL COMMAND...: runs COMMAND and, while it runs, prints
# "… still LABEL (Ns)" every 20 s on stderr, so a long compile never leaves a CI log
# silent for 30 s. Exits with COMMAND's status.
set -uo pipefail
label=$1
shift
echo "$label…" >&2
start=$SECONDS
( while sleep 20; do echo "… still $label ($((SECONDS - start))s)" >&2; done ) &
beat=$!
"$@"
rc=$?
kill "$beat" 2>/dev/null
wait "$beat" 2>/dev/null
exit $rc
