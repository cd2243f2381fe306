"""Repository-level tasks: their environments, patches, verdicts and gold check."""
