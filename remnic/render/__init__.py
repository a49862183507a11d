"""Rendering: the X-ray snapshot types and the one Jinja renderer every surface uses.

- :mod:`.snapshot`: ``RecallXraySnapshot`` and its parts (schema v1), standard library only;
- :mod:`.vocabulary`: the schema's value sets and key orders;
- :mod:`.jsfmt`: numbers, dates, strings and JSON written as JavaScript writes them;
- :mod:`.xray`: text, markdown and JSON rendering of a snapshot, as the original Remnic renders it.

It knows only snapshot types: recall builds the snapshot, surfaces print it.
"""
