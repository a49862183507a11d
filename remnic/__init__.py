"""remnic: git-backed, file-native memory for AI agents and the people who work with them.

The public Python API — everything else is internal::

    from remnic import Memory
    mem = Memory.init("~/memories")          # or Memory.open() to discover it like git
    result = mem.store("We cut releases every Tuesday", category="decision")
    mem.get(result.id); mem.list(category="decision"); mem.versions(result.id)

Every write returns a :class:`WriteResult`; records are :class:`MemoryRecord`; ``observe`` makes
:class:`MemoryObservation` records;
errors derive from :class:`RemnicError`.
"""

from remnic.errors import LockTimeoutError, MemoryFormatError, NotFoundError, RemnicError, UsageError, ValidationError
from remnic.memfile.model import MemoryRecord
from remnic.observe.records import MemoryObservation
from remnic.service import Memory, WriteResult
from remnic.version import __version__

__all__ = [
    "LockTimeoutError",
    "Memory",
    "MemoryFormatError",
    "MemoryObservation",
    "MemoryRecord",
    "NotFoundError",
    "RemnicError",
    "UsageError",
    "ValidationError",
    "WriteResult",
    "__version__",
]
