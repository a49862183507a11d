"""Rendering: the X-ray snapshot types and the one Jinja renderer every surface uses.

- :mod:`.snapshot`: ``RecallXraySnapshot`` and its parts (schema v1), standard library only;
- :mod:`.xray`: text, markdown and JSON rendering of a snapshot.

It knows only snapshot types: recall builds the snapshot, surfaces print it.
"""
