"""The code shipped into the sandbox beside the candidate, shared with the mutation audit: the candidate guard
(candidate_guard.py, with the source shipped.py reads) and the hypothesis profile."""
