"""The walls around a worker process, one module per wall, raised in order by `enter.enter`; `probe` (run as
`python -m grader.sandbox.worker.walls`) finds which of them this machine allows. Standard library only: the
probe runs in a throwaway interpreter, and the walls go up before any student code runs."""
