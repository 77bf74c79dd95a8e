"""lint: refuse health probes that lie or that kill long-running work."""
