"""doctor's reports as people and machines read them: text, JSON, the fleet table, the
snapshot report."""
