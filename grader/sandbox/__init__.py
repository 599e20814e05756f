"""Stage 2, sandbox: the process boundary. The grader's side (client and its clock; confinement, fs_view, uids,
processes: the walls and their upkeep; spawn) asks; the worker's side (`sandbox.worker`, the only code that ever
runs student code) answers with validated raw tensors."""
