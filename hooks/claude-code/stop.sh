#!/bin/sh
# remnic for Claude Code, Stop (after every response): hand the new turns to observe; its triggers decide when they become memories.
exec "$(dirname "$0")/../agent-hook.sh" stop --host claude-code
