"""Drivers: long-running or host-invoked processes that call the service.

- :mod:`.watch`: ``remnic sync watch``, saved files become synced memories;
- :mod:`.hooks`: git hooks and the agent host hooks (Claude Code, Codex).
"""
