"""The memory file format: the one place that parses and writes frontmatter.

- :mod:`.model`: the record, the schema (categories, statuses, key order), ids, times, hashes,
  YAML parse and serialise;
- :mod:`.validate`: caller input and whole files checked by one rule (schema, secrets,
  conflict markers), as pure functions returning field problems;
- :mod:`.normalize`: the frontmatter keys sync fills in, patched line by line so the body
  and every key the user wrote keep their bytes.

Nothing here touches disk, git or the index.
"""
