"""What the runner keeps to resume and to skip repeated work: the content-addressed cache, the user cache folder and
the harness fingerprint every cached verdict's key carries."""
