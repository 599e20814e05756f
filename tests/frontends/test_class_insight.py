"""`attention-grader grade --starter --compare-with` on a small class (a near-copy pair, two independently written
zero-fill twins, one of them last year's solution handed in again), graded with two checks: the three CSV files,
class.html checked for its elements and rendered in headless Chromium (where it is installed), the same files
again from the database on an unchanged re-run, and bad input as one line with exit status 2 before anything is
graded."""

from __future__ import annotations

import csv
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import SUBMISSIONS
from test_batch import files, grade

CLASS = SUBMISSIONS / "class_insight"
SAMPLES = ["alice.py", "bob.py", "ivan.py", "judy.py"]
# Two checks are enough: one that the twins fail, so that the diagnosis (and the behaviour digest) runs
RUBRIC = """name = "quick"
exercise = "chapter5"
[checks.loads]
points = 0
[checks.future_weights_zero]
points = 10
depends = ["loads"]
"""
CHROMIUM = Path("/usr/bin/chromium")
OUTPUTS = ["similarity.csv", "provenance.csv", "twins.csv", "class.html"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(class folder, output folder, the options) after one run."""
    folder = tmp_path_factory.mktemp("class")
    for name in SAMPLES:
        shutil.copy(CLASS / name, folder / name)
    last_year = tmp_path_factory.mktemp("last_year")
    shutil.copy(CLASS / "judy.py", last_year / "judy_2024.py")  # judy.py is last year's, handed in again
    rubric = tmp_path_factory.mktemp("rubric") / "quick.toml"
    rubric.write_text(RUBRIC)
    out = tmp_path_factory.mktemp("grades")
    options = ["--rubric", rubric, "--starter", CLASS / "_starter.py", "--compare-with", last_year]
    result = grade(folder, "--out", out, "--workers", "2", *options)
    assert result.returncode == 0, result.stderr
    return folder, out, options, last_year


def rows(path: Path) -> list[list[str]]:
    return list(csv.reader(path.open()))


def test_csv_files_list_the_pair_the_copy_and_the_twins(graded):
    _, out, _, last_year = graded
    assert rows(out / "similarity.csv")[0] == ["a", "b", "score", "shared_lines"]
    [(a, b, score, lines)] = rows(out / "similarity.csv")[1:]
    assert (a, b) == ("alice.py", "bob.py") and float(score) >= 0.5 and int(lines) >= 5
    assert rows(out / "provenance.csv") == [["submission", "source", "score"],
                                            ["judy.py", f"{last_year}/judy_2024.py", "1.00"]]
    assert rows(out / "twins.csv") == [["group", "submission", "mistake"], ["1", "ivan.py", "zero fill"],
                                       ["1", "judy.py", "zero fill"]]
    summary = (out / "summary.md").read_text()
    assert "## Similar: review" in summary and "| `alice.py` | `bob.py` |" in summary


class Page(HTMLParser):
    """What the page holds: ids, the gradebook's rows, the histogram's bars, the code blocks, its text."""

    def __init__(self, text: str):
        super().__init__()
        self.ids, self.tags, self.words, self.stack = set(), [], [], []
        self.gradebook_rows, self.bars, self.pres = 0, 0, 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.ids.add(a.get("id"))
        self.stack.append(a.get("id") or (self.stack[-1] if self.stack else None))
        self.tags.append((tag, a))
        self.gradebook_rows += tag == "tr" and self.stack[-1] == "gradebook"
        self.bars += tag == "rect" and self.stack[-1] == "histogram"
        self.pres += tag == "pre"
        if tag in ("meta", "link", "img", "br", "hr", "input"):
            self.stack.pop()

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        self.words.append(data)


def test_class_page_has_every_part_and_no_accusation(graded):
    _, out, _, _ = graded
    text = (out / "class.html").read_text()
    page = Page(text)
    assert {"gradebook", "histogram", "checks", "mistakes", "similar", "provenance", "twins", "pair-1"} <= page.ids
    assert page.gradebook_rows == 1 + len(SAMPLES) and page.bars == 10
    assert page.pres >= 2  # the shared regions, side by side
    words = " ".join(page.words)
    assert "similar: review" in words and "zero fill" in words and "judy_2024.py" in words
    assert "cheat" not in text.lower() and "plagiar" not in text.lower()
    assert not any(a.get("src", "").startswith("http") or a.get("href", "").startswith("http") and tag == "link"
                   for tag, a in page.tags)  # self-contained: nothing loaded from elsewhere


def chromium(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                           "--no-first-run", "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", *map(str, args)], capture_output=True, timeout=120)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium at /usr/bin/chromium (apt-get install chromium)")
def test_class_page_renders_in_chromium_and_its_gradebook_sorts(graded, tmp_path):
    from PIL import Image

    _, out, _, _ = graded
    shot = tmp_path / "class.png"
    done = chromium(f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600", f"--screenshot={shot}",
                    (out / "class.html").as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr.decode()[-2000:]
    image = Image.open(shot).convert("L")
    dark = sum(image.histogram()[:128])
    assert dark > 0.01 * image.width * image.height  # text and bars, not a blank page
    # the same page with a click on the "total" heading: the browser's own DOM after the script ran
    clicked = tmp_path / "clicked.html"
    clicked.write_text((out / "class.html").read_text().replace(
        "</body>", "<script>document.querySelectorAll('#gradebook th')[1].click()</script></body>"))
    dom = chromium(f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom", clicked.as_uri())
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    table = dom.stdout.decode().split("id=\"gradebook\"")[1].split("</table>")[0]
    totals = [float(row.split("<td class=\"num\">")[1].split("</td>")[0]) for row in table.split("<tr>")[2:]]
    assert totals == sorted(totals) and totals != [float(r[1]) for r in rows(out / "gradebook.csv")[1:]]


def test_unchanged_rerun_rewrites_the_same_files_from_the_database(graded):
    folder, out, options, _ = graded
    before = files(out)
    for name in OUTPUTS:
        (out / name).unlink()
    result = grade(folder, "--out", out, *options)
    assert result.returncode == 0, result.stderr
    assert "0 to grade" in result.stderr
    assert files(out) == before


@pytest.mark.parametrize("option, value, says", [
    ("--starter", "missing.py", "missing.py: no such file"),
    ("--starter", "latin1.py", "latin1.py: not UTF-8 text"),
    ("--compare-with", "missing", "missing: no such folder"),
    ("--compare-with", "a.py", "a.py: not a folder"),
    ("--compare-with", "empty", "empty: holds no .py files"),
])
def test_bad_insight_input_is_one_line_and_exit_2(tmp_path, option, value, says):
    (tmp_path / "a.py").write_text("def attention(q, k, v):\n    return q, q\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "latin1.py").write_bytes("# handed out by the café\n".encode("latin-1"))
    result = subprocess.run([*grade_argv(tmp_path), option, str(tmp_path / value)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()  # nothing graded


def grade_argv(folder: Path) -> list[str]:
    from test_batch import grade_cmd

    return grade_cmd(folder, "--out", folder / "out")
