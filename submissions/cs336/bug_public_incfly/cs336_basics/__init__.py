# BUG (public folder): incfly/assignment1-basics @ 44054a77500aac617c10c23161cddd1a9924e40a, cs336_basics/__init__.py,
# copied with nothing changed (MIT, the repository's LICENSE, Copyright 2025 Stanford University). The folder keeps only
# what the attention adapters import.
import importlib.metadata

try:
    __version__ = importlib.metadata.version("cs336_basics")
except importlib.metadata.PackageNotFoundError:
    pass
