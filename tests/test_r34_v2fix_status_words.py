"""Lenient status reading (v2 finding 5) never changes what a vault's own workflow word means: `review`,
`flagged`, `delete`, `reject`, `approved` … name no status (active, recalled, and `remnic doctor` warns naming
the file, the field and the valid statuses), as before; only remnic's own names in other spellings
(`pending-review`, `QUARANTINED`) and `quarantine` gained a reading. The table is docs/remnic-compat.md's."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli

from remnic.memfile.schema import STATUSES
from remnic.memfile.values import status_of, unknown_status

READINGS = {
    # remnic's own names, any case or separator
    "pending-review": "pending_review",
    "Pending Review": "pending_review",
    "PENDING_REVIEW": "pending_review",
    "QUARANTINED": "quarantined",
    "Rejected": "rejected",
    "Superseded": "superseded",
    "Archived": "archived",
    "FORGOTTEN": "forgotten",
    "Active": "active",
    # words remnic has long read, and `quarantine`
    "quarantine": "quarantined",
    "pending": "pending_review",
    "needs review": "pending_review",
    "needs-review": "pending_review",
    "declined": "rejected",
    "wontfix": "rejected",
    "deprecated": "superseded",
    "obsolete": "superseded",
    "archive": "archived",
    "retracted": "forgotten",
    "deleted": "forgotten",
    "removed": "forgotten",
}
WORKFLOW = [
    "review", "Review", "in review", "in-review", "under review", "awaiting review", "to review", "unreviewed",
    "flag", "flagged", "reject", "rejection", "decline", "dismiss", "dismissed", "wont fix",
    "supersede", "deprecate", "forget", "forgot", "retract", "delete", "remove",
    "accepted", "approved", "current", "confirmed", "valid", "live", "draft", "done", "evergreen",
]  # fmt: skip
"""A vault's own words: read active with a doctor warning, exactly as before the lenient reading."""


def test_the_status_word_table() -> None:
    """remnic's own words read as meant; every workflow word reads active (archived under archive/) and is unknown."""
    read = {word: status_of({"status": word}, "notes/x.md") for word in READINGS}
    assert read == READINGS and not any(unknown_status({"status": w}) for w in READINGS)
    misread = {w: status_of({"status": w}, "notes/x.md") for w in WORKFLOW}
    assert misread == dict.fromkeys(WORKFLOW, "active") and all(unknown_status({"status": w}) for w in WORKFLOW)
    assert {status_of({"status": w}, "archive/x.md") for w in WORKFLOW} == {"archived"}


def test_vault_notes_with_workflow_statuses_stay_recalled_and_out_of_the_review_queue(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    notes = root / "notes"
    notes.mkdir(parents=True)
    said = {
        "blog": ("review", "Blog post draft about zebra migration patterns in Kenya."),
        "census": ("flagged", "Important: the zebra census runs every March."),
        "cleanup": ("delete", "Zebra photo folder from 2019 can go once backed up."),
        "feeding": ("done", "Zebra feeding schedule was moved to 7am."),
        "parked": ("QUARANTINED", "Zebra vaccine supplier note, unverified."),
    }
    for name, (status, text) in said.items():
        (notes / f"{name}.md").write_text(f"---\nstatus: {status}\n---\n{text}\n", encoding="utf-8")
    d = ["--memory-dir", str(root)]
    assert run_cli("init", str(root), "--adopt", "notes/**").code == 0
    assert run_cli("sync", "run", *d).code == 0
    hits = run_cli("query", "zebra", "-k", "10", "--json", *d).json()["hits"]
    assert sorted(h["path"] for h in hits) == [f"notes/{n}.md" for n in ("blog", "census", "cleanup", "feeding")]
    queued = run_cli("review", "list", "--json", *d).json()["memories"]
    assert [m["path"] for m in queued] == ["notes/parked.md"]  # only remnic's own status, any case
    check = {c["name"]: c for c in run_cli("doctor", "--json", *d).json()["checks"]}["foreign-values"]
    assert check["status"] == "warn", check
    for name in ("blog", "census", "cleanup", "feeding"):
        [line] = [p for p in check["problems"] if p.startswith(f"notes/{name}.md: status")]
        assert "names no status" in line and "valid statuses: " + ", ".join(STATUSES) in line, line
    assert not [p for p in check["problems"] if p.startswith("notes/parked.md") and "names no status" in p]
    for name, (status, _text) in said.items():  # the files keep their words
        assert f"status: {status}\n" in (notes / f"{name}.md").read_text(encoding="utf-8")
    assert git(root, "status", "--porcelain") == ""
