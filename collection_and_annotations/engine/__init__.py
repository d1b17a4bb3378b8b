"""Task engine: runs, assignments, units, allocation to workers, drafts and submissions."""
