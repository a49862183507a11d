#!/bin/sh
# remnic for Claude Code, PreCompact: hand the transcript to observe before the context is compacted.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # dirname without a process
exec "$here/../agent-hook.sh" pre-compact --host claude-code
