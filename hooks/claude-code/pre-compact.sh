#!/bin/sh
# remnic for Claude Code, PreCompact: hand the transcript to observe before the context is compacted.
exec "$(dirname "$0")/../agent-hook.sh" pre-compact --host claude-code
