"""Text that looks the same is the same memory, however a client composed its characters."""

from __future__ import annotations

import unicodedata

from remnic.service.memory import Memory


def test_the_same_text_precomposed_or_decomposed_is_one_memory(memory: Memory) -> None:
    text = "Unicode test: café crème"
    first = memory.store(unicodedata.normalize("NFC", text))
    again = memory.store(unicodedata.normalize("NFD", text))
    assert not again.changed  # nothing written: the duplicate is named
    assert again.records[0].id == first.records[0].id
    assert len(memory.list()) == 1
    other = memory.store("unicode TEST: café crème!")  # another spelling is another text
    assert other.records[0].id != first.records[0].id
