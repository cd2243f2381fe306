"""The suite runtime shared by the sandbox and the mutation audit: suite modules, the candidate guard, hypothesis."""
