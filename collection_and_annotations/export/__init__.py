"""Export of stored submissions: one row per answered item, or whole submissions."""
