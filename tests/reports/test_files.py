"""Files a report writes are whole, and readable by whoever a plain open() would let read them."""

import os
import stat

from grader.reports.files import write_atomic


def test_a_written_file_has_the_mode_open_would_give_it(tmp_path):
    """PrairieLearn's grader host reads results.json as another user than the container's root: mkstemp's 0600 kept
    it out."""
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "results.json", "{}")
        os.umask(0o077)
        write_atomic(tmp_path / "private.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "results.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600
    assert (tmp_path / "results.json").read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == [
        "private.json", "results.json"]
