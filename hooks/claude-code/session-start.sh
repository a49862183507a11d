#!/bin/sh
# remnic for Claude Code, SessionStart: recall relevant memories into the new session's context.
# Prints {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}.
exec "$(dirname "$0")/../agent-hook.sh" session-start --host claude-code
