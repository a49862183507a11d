"""The observation pipeline: conversation traces become durable memories, with no LLM.

- :mod:`.archive`: validated messages archived per session.
"""
