"""How a submission's code is read: the options every front end offers, declared here once."""

from __future__ import annotations

from dataclasses import asdict, dataclass

NOTEBOOK_MODES = ("defs", "full")


@dataclass(frozen=True)
class Reading:
    defs_only: bool = False  # a .py file: only imports, definitions and the values they use
    notebook_mode: str = "defs"  # a notebook: definitions only, or every cell in order

    @classmethod
    def from_options(cls, get) -> Reading:
        """From parsed options: `get(name)` is `vars(args).get` for argparse, `config.getoption` for pytest."""
        return cls(defs_only=bool(get("defs_only")), notebook_mode=get("notebook_mode") or "defs")

    def argv(self) -> list[str]:
        """The options that read the code this way again (for the replay command a report prints)."""
        return ["--defs-only"] * self.defs_only + (["--notebook-mode", self.notebook_mode] if self.notebook_mode != "defs" else [])

    def as_dict(self) -> dict:
        return asdict(self)


def add_options(add) -> None:
    """Declare the reading options with `add`: argparse's `add_argument` or pytest's `addoption` (same keywords)."""
    add("--defs-only", action="store_true",
        help="for a .py file: run only imports, definitions and the values they use, not its top-level code")
    add("--notebook-mode", choices=list(NOTEBOOK_MODES), default="defs",
        help="notebooks: definitions only (default), or every cell in order")
