#!/bin/sh
# remnic for Claude Code, SessionEnd: hand the transcript's last turns to observe and flush the session's buffer.
exec "$(dirname "$0")/../agent-hook.sh" session-end --host claude-code
