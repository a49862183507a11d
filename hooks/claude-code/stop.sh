#!/bin/sh
# remnic for Claude Code, Stop: hand the session transcript (new turns only) to remnic's observe archive.
exec "$(dirname "$0")/../agent-hook.sh" stop --host claude-code
