# BUG (folder): a copy of correct_modules with a planted bug in cs336_basics/model.py (sdpa_mask_inverted); this file is
# correct_modules' guarded handout __init__.
import importlib.metadata

try:
    __version__ = importlib.metadata.version("cs336_basics")
except importlib.metadata.PackageNotFoundError:
    __version__ = "0+unknown"
