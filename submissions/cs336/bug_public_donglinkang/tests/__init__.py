# BUG (public folder): donglinkang2021/cs336-assignment1-basics @ c7bd4a373c1c56fc6cb02cc3f848c13d02a2b825,
# tests/__init__.py, copied with nothing changed (MIT, the repository's LICENSE, Copyright 2025 Stanford University).
# The folder keeps only what the attention adapters import.
