"""The code that runs inside the untrusted child, after the candidate may have run: the pytest session and its
reporter (`pytest_child`; a repo task's `repo_plugin`; a cost run's `cost_harness`), and the anti-forgery checks
that make a tampered, forged or escaped result fail (`integrity`, `guarded_objects`, `audit_hook`)."""
