"""Judging one candidate: static checks (syntax, signature, the AST gate), then its suites in the sandbox."""
