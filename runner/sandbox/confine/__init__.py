"""The boundary, read first by a security reviewer: how a child is confined (network namespace, its own uid,
rlimits, a scrubbed environment: `isolation`), the limits it is held to (`limits`), and the one loop that watches
it, stops it at its limits and kills everything it started (`supervise`). docs/sandbox.md says what
each defends and what is not defended."""
