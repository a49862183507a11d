#!/bin/sh
# remnic for Claude Code, SessionStart: recall relevant memories into the new session's context.
# Prints {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # dirname without a process
exec "$here/../agent-hook.sh" session-start --host claude-code
