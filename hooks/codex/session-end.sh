#!/bin/sh
# remnic for Codex (0.171 and later), SessionEnd: hand the transcript's last turns to observe and flush the session's buffer.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # dirname without a process
exec "$here/../agent-hook.sh" session-end --host codex
