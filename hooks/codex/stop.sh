#!/bin/sh
# remnic for Codex, Stop (after every turn): hand the new turns to observe; its triggers decide when they become memories.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # dirname without a process
exec "$here/../agent-hook.sh" stop --host codex
