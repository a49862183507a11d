#!/bin/sh
# remnic for Codex, Stop (after every turn): hand the new turns to observe; its triggers decide when they become memories.
exec "$(dirname "$0")/../agent-hook.sh" stop --host codex
