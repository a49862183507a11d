"""Which flushes one observe call runs, and how many turns each takes (see :mod:`.observing`).

Each flush is begun, persisted and completed as :mod:`remnic.observe.buffer` prescribes, so a kill
at any point loses no turn and persists none twice. An agent hook has a time budget under the
host's timeout (``observe.hookBudgetS``): its flushes take at most :data:`HOOK_FLUSH_TURNS` turns
each, each a commit of its own, and none is begun past the budget, so a long transcript is flushed
over several hooks instead of being started again, whole, by each hook the host kills.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from remnic.fsio import crash_point
from remnic.observe.buffer import BufferState, SessionBuffer
from remnic.observe.triggers import Embed, decide_flush

if TYPE_CHECKING:
    from collections.abc import Callable

    from .flushing import FlushResult
    from .memory import Memory

    Progress = Callable[[int, int], None]

__all__ = ["HOOK_FLUSH_TURNS", "flush_due"]

HOOK_FLUSH_TURNS = 100
"""The most turns one flush takes when it has a deadline (an agent hook) and more are due: each such
chunk is a commit of its own, so a hook stopped at its budget, or killed, keeps the chunks it committed."""


def flush_due(
    mem: Memory,
    buffer: SessionBuffer,
    trigger: str | None,
    embed: Embed | None,
    new_from: int | None,
    source: str,
    progress: Progress | None,
    deadline: float | None,
) -> tuple[list[FlushResult], BufferState, str | None]:
    """Run the flushes the triggers call for (an open plan first), each begun, persisted and completed
    as :mod:`remnic.observe.buffer` prescribes. With a ``deadline`` (``time.monotonic()``) a flush takes
    at most :data:`HOOK_FLUSH_TURNS` turns, and as many as the time left fits at the pace of this call's
    flushes so far; none is begun past it. Returns the flushes, the buffer's state after them, and why
    turns that were due are left (None: nothing was)."""
    settings = mem.settings.observe
    state = buffer.state()
    decision = decide_flush(state.pending, settings, event=trigger, embed=embed, new_from_seq=new_from)
    flushes: list[FlushResult] = []
    spent, done = 0.0, 0  # seconds and turns of this call's flushes: its pace
    with mem.index_later():  # several flushes of one call: one index update after the last
        while decision.flush or state.open_plan is not None:
            resumed = state.open_plan is not None  # begun before this call: a crash may have committed it
            upto = decision.upto_seq
            if deadline is not None:
                room = _room(deadline, spent, done)
                due = [b.seq for b in state.pending if upto is None or b.seq <= upto]
                wanted = len(state.open_plan.turns) if state.open_plan is not None else min(1, len(due))
                if room < wanted or room == 0:
                    return flushes, state, _deferred(mem, buffer, state, flushes)
                if state.open_plan is None and len(due) > room:
                    upto = due[room - 1]
            started = time.monotonic()
            plan = buffer.begin_flush(decision.reason or "resume", upto_seq=upto)
            if plan is None:
                break
            crash_point("flush-begun")
            from .flushing import persist_flush  # loads with the first flush

            flushes.append(persist_flush(mem, plan, source=source, resumed=resumed, progress=progress))
            crash_point("flush-persisted")
            buffer.complete_flush(plan.flush_id)
            spent, done = spent + time.monotonic() - started, done + len(plan.turns)
            state = buffer.state()
            decision = decide_flush(state.pending, settings, event=trigger, embed=embed)
    return flushes, state, None


def _room(deadline: float, spent: float, done: int) -> int:
    """How many turns a flush begun now may take: none past the deadline; :data:`HOOK_FLUSH_TURNS`
    at most, and what the time left fits at the pace measured so far."""
    left = deadline - time.monotonic()
    if left <= 0:
        return 0
    if done == 0:
        return HOOK_FLUSH_TURNS
    return min(HOOK_FLUSH_TURNS, int(left * done / max(spent, 1e-6)))


def _deferred(mem: Memory, buffer: SessionBuffer, state: BufferState, flushes: Sequence[FlushResult]) -> str:
    """The status line's word on the turns left buffered, and what flushes them."""
    plan = state.open_plan
    left = len(state.pending) + (len(plan.turns) if plan is not None else 0)
    namespace = f" --namespace {shlex.quote(buffer.namespace)}" if buffer.namespace != "default" else ""
    where = (
        f"{left} turns stay buffered for the next hook, a running `remnic serve`, or `remnic observe - "
        f"--session-key {shlex.quote(buffer.session_key)}{namespace} --flush </dev/null`"
    )
    if plan is not None and not flushes and len(plan.turns) > HOOK_FLUSH_TURNS:
        return (
            f"a flush of {len(plan.turns)} turns begun earlier is more than a hook takes ({HOOK_FLUSH_TURNS}): {where}"
        )
    budget = mem.settings.observe.hook_budget_s
    return f"observe.hookBudgetS ({budget:g} s) spent after {len(flushes)} flush(es) of this hook: {where}"
