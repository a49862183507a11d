"""Every remnic error pickles whole (class, message, problems, attributes), so an error raised in a worker
process reaches the parent as raised, and a ProcessPoolExecutor stays usable."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import remnic
from remnic import errors
from remnic.errors import FieldProblem, MemoryFormatError, ValidationError, WriteConflictError
from remnic.server.errors import MethodNotAllowed, RateLimited
from remnic.service.memory import Memory
from remnic.service.space_safety import UnsavedWorkError


def _same(a: BaseException, b: BaseException) -> None:
    assert type(a) is type(b)
    assert str(a) == str(b) and a.args == b.args
    assert vars(a) == vars(b)  # message, problems, path, held, kept …


def test_errors_with_their_own_init_pickle_to_an_equal_error() -> None:
    problem = FieldProblem("frontmatter", "bad YAML", path="facts/x.md", line=2, options=("a", "b"))
    cases = [
        MemoryFormatError("facts/x.md", [problem]),
        MemoryFormatError("facts/y.md", []),
        WriteConflictError("facts/x.md"),
        WriteConflictError("facts/x.md", held=True, kept=["facts/y.md"]),
        ValidationError.single("top_k", "must be positive", options=("1", "2")),
        # subclasses elsewhere with keyword-only arguments of their own
        UnsavedWorkError("unsaved", problems=[problem], more=2, hint="push first", extra={"space": "work"}),
        RateLimited("slow down", retry_after_s=1.5),
        MethodNotAllowed("no", allow=["GET", "POST"]),
    ]
    for error in cases:
        back = pickle.loads(pickle.dumps(error))
        _same(error, back)
        assert back.to_dict() == error.to_dict() and back.describe() == error.describe()
    conflict = pickle.loads(pickle.dumps(WriteConflictError("facts/x.md")))
    assert str(conflict).count("changed on disk") == 1  # not built twice from its own message
    assert conflict.path == "facts/x.md" and conflict.held is False and conflict.kept == []
    for name in remnic.__all__:
        cls = getattr(remnic, name)
        if (
            isinstance(cls, type)
            and issubclass(cls, errors.RemnicError)
            and cls
            not in (
                MemoryFormatError,
                WriteConflictError,
            )
        ):
            error = cls("it failed", problems=[FieldProblem("x", "bad")])
            _same(error, pickle.loads(pickle.dumps(error)))


def _read(args: tuple[str, str]) -> str:
    root, path = args
    with Memory.open(root) as mem:
        return mem.get(path).content


def test_a_worker_hitting_a_malformed_file_raises_it_in_the_parent(memory: Memory) -> None:
    good = memory.store("Otters hold hands while sleeping")
    (memory.root / "facts" / "mal.md").write_text("---\nid: [unclosed\n---\n\nBroken file\n", encoding="utf-8")
    root = str(memory.root)
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        with pytest.raises(MemoryFormatError) as caught:
            pool.submit(_read, (root, "facts/mal.md")).result(timeout=120)
        assert caught.value.problems and "facts/mal.md" in str(caught.value)
        # the pool is not broken: the next job runs in it
        assert pool.submit(_read, (root, good.record.path)).result(timeout=120) == "Otters hold hands while sleeping"


def test_parsing_the_malformed_file_here_gives_the_same_error(tmp_path: Path) -> None:
    """The error the worker sends is the one raised in process: same class, message and problems."""
    mem = Memory.init(tmp_path / "mem")
    try:
        (mem.root / "facts" / "mal.md").write_text("---\nid: [unclosed\n---\n\nBroken\n", encoding="utf-8")
        with pytest.raises(MemoryFormatError) as caught:
            mem.get("facts/mal.md")
        _same(caught.value, pickle.loads(pickle.dumps(caught.value)))
    finally:
        mem.close()
