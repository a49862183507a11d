#!/bin/sh
# Shared runner for the agent host hooks: `remnic hooks run <event> --host <host>` with the hook's
# JSON on stdin. Finds remnic via $REMNIC_PYTHON, then `remnic` on PATH, then python3 -m remnic.
# An agent session must never be blocked by memory: any failure prints nothing and exits 0.
[ "${REMNIC_SKIP_HOOKS:-}" = "1" ] && exit 0
if [ -n "${REMNIC_PYTHON:-}" ] && [ -x "$REMNIC_PYTHON" ]; then
    "$REMNIC_PYTHON" -m remnic hooks run "$@" 2>>"${REMNIC_HOOK_LOG:-/dev/null}" || true
elif command -v remnic >/dev/null 2>&1; then
    remnic hooks run "$@" 2>>"${REMNIC_HOOK_LOG:-/dev/null}" || true
else
    python3 -m remnic hooks run "$@" 2>>"${REMNIC_HOOK_LOG:-/dev/null}" || true
fi
exit 0
