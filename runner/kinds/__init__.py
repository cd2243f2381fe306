"""Task kinds: what differs between a function task and a repo task (prompts, extraction, judging, the verdict's
key, the gold check) behind one interface (`base.TaskKind`), one implementation per kind, found by the task's
`kind` in `registry.KINDS`. Nothing outside this package asks which kind a task is."""
