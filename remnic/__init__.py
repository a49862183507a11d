"""remnic: git-backed, file-native memory for AI agents and the people who work with them.

The public Python API::

    from remnic import Memory
    mem = Memory.init("~/memories")          # or Memory.open() to discover it like git
    rec = mem.store("We cut releases every Tuesday", category="decision")
    mem.get(rec.id); mem.list(category="decision"); mem.versions(rec.id)
"""

from remnic.memfile.model import MemoryRecord
from remnic.service.memory import ImportResult, Memory

from .errors import MemoryFormatError, NotFoundError, RemnicError, UsageError, ValidationError

__version__ = "0.1.0"
__all__ = [
    "ImportResult",
    "Memory",
    "MemoryFormatError",
    "MemoryRecord",
    "NotFoundError",
    "RemnicError",
    "UsageError",
    "ValidationError",
    "__version__",
]
