"""The sandbox: warm workers that run a candidate's suites in a confined, forked pytest child and judge each suite."""
