"""Notes: the safe note store (atomic writes, line endings, undo snapshots, audit log)
and the vault facade."""
