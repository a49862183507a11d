#!/bin/sh
# remnic for Codex (0.171 and later), SessionEnd: hand the transcript's last turns to observe and flush the session's buffer.
exec "$(dirname "$0")/../agent-hook.sh" session-end --host codex
