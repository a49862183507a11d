#!/bin/sh
# remnic for Claude Code, Stop (after every response): hand the new turns to observe; its triggers decide when they become memories.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # dirname without a process
exec "$here/../agent-hook.sh" stop --host claude-code
