"""Stage 6, front ends: the commands people run on top of the pipeline (the pytest plugin, `check`, `replay`,
`grade`), each declaring its own options once."""
