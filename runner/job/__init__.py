"""One job: its start-up phases, the attempt loop (generate, extract, judge, repair) and its progress line."""
