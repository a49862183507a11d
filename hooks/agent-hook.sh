#!/bin/sh
# Shared runner for the agent host hooks: `remnic hooks run <event> --host <host>` with the hook's
# JSON on stdin. Finds remnic via $REMNIC_PYTHON, then `remnic` on PATH, then python3. With a Python
# it runs `-m remnic.cli.hooks`: the same command, without building every other command's parser.
# The host runs this in the session's project folder: `python -P` keeps that folder off sys.path,
# so a project's json.py or uuid.py is never imported in place of the standard library's.
# An agent session must never be blocked by memory: any failure exits 0. When remnic cannot run
# at all, SessionStart says so in a one-line systemMessage (both hosts show it); the rest stay silent.
[ "${REMNIC_SKIP_HOOKS:-}" = "1" ] && exit 0
event=${1:-}
log=${REMNIC_HOOK_LOG:-/dev/null}
why=""
if [ -n "${REMNIC_PYTHON:-}" ] && [ -x "$REMNIC_PYTHON" ]; then
    set -- "$REMNIC_PYTHON" -P -m remnic.cli.hooks run "$@"
else
    [ -n "${REMNIC_PYTHON:-}" ] && why="REMNIC_PYTHON=$REMNIC_PYTHON is not an executable file; "
    if command -v remnic >/dev/null 2>&1; then
        set -- remnic hooks run "$@"
    elif command -v python3 >/dev/null 2>&1; then
        set -- python3 -P -m remnic.cli.hooks run "$@"
    else
        set --
        why="${why}no remnic and no python3 on PATH"
    fi
fi
if [ "$event" != "session-start" ]; then
    [ $# -gt 0 ] && { "$@" 2>>"$log" || true; }
    exit 0
fi
# SessionStart: its output is kept, so a run that printed nothing and failed can be told apart.
out=""
if [ $# -gt 0 ]; then
    err=$(mktemp "${TMPDIR:-/tmp}/remnic-hook.XXXXXX" 2>/dev/null) || err=""
    if [ -n "$err" ]; then
        out=$("$@" 2>"$err")
        rc=$?
        [ "$log" = /dev/null ] || cat "$err" >>"$log" 2>/dev/null
        last=""  # read only for a run that printed nothing and failed: no more processes per session
        [ -z "$out" ] && [ "$rc" -ne 0 ] && last=$(grep -v '^[[:space:]]*$' "$err" | tail -n 1)
        rm -f "$err"
    else
        out=$("$@" 2>>"$log")
        rc=$?
        last=""
    fi
    if [ -n "$out" ]; then
        printf '%s\n' "$out"
        exit 0
    fi
    [ "$rc" -eq 0 ] && exit 0  # ran, with nothing to inject
    why="$why$1 exited $rc${last:+: $last}"
fi
# JSON-safe: printable ASCII only, at most 300 characters, then \ and " escaped.
why=$(printf '%s' "$why" | LC_ALL=C tr -c '\040-\176' ' ' | cut -c1-300 | sed 's/\\/\\\\/g; s/"/\\"/g')
printf '{"systemMessage": "remnic: hooks could not run (%s); no memories loaded. See REMNIC_HOOK_LOG or `remnic connectors doctor`.", "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""}}\n' "$why"
exit 0
