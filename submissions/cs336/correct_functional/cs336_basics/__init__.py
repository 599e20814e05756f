# CORRECT (folder): the handout's cs336_basics/__init__.py, unchanged (stanford-cs336/assignment1-basics @ 25a8a49f):
# importlib.metadata.version raises PackageNotFoundError unless the package is installed (uv sync installs it).
import importlib.metadata

__version__ = importlib.metadata.version("cs336_basics")
