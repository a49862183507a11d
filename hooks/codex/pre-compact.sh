#!/bin/sh
# remnic for Codex, PreCompact: hand the transcript to observe before the context is compacted.
exec "$(dirname "$0")/../agent-hook.sh" pre-compact --host codex
