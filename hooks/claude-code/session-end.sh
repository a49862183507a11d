#!/bin/sh
# remnic for Claude Code, SessionEnd: hand the transcript's last turns to observe and flush the session's buffer.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # dirname without a process
exec "$here/../agent-hook.sh" session-end --host claude-code
