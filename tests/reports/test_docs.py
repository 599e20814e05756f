"""The docs the grader can write itself are current, and the README points only at files that exist."""

import re
import subprocess
import sys

from conftest import ROOT

from grader.reports import rubric_doc


def test_the_rubrics_page_is_the_rubric_files():
    assert (ROOT / "docs" / "rubrics.md").read_text() == rubric_doc.bundled(ROOT / "rubrics"), (
        "docs/rubrics.md is stale: python -c \"from pathlib import Path; from grader.reports import rubric_doc; "
        "Path('docs/rubrics.md').write_text(rubric_doc.bundled(Path('rubrics')))\"")


def test_the_rubric_command_shows_one_and_refuses_a_bad_one_in_one_line(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "grader.frontends.cli", "rubric", *a],  # noqa: E731
                                    capture_output=True, text=True, timeout=120)
    md = run("kv_cache", "--markdown")
    assert md.returncode == 0 and md.stdout.startswith("## ") and "| `cache_returned`" in md.stdout
    assert "decode_matches_full" in run("kv_cache").stdout
    bad = run(str(tmp_path / "nope.toml"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_readme_is_short_and_its_links_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= 15_000
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links and [link for link in links if not (ROOT / link).exists()] == []
    for doc in (ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+)\)", doc.read_text()):
            assert (doc.parent / link).exists() or (ROOT / link).exists(), f"{doc.name}: {link}"
