"""The class summary's two mends: the histogram's labels lie inside its picture, and "unrecognised" is said apart
from the diagnosed mistakes, not counted as one of them."""

from grader.grading.diagnosis import UNRECOGNISED
from grader.grading.outcome import Grade
from grader.reports import summary


def grade(name: str, score: float, diagnosis: list[str]) -> Grade:
    return Grade(name, "chapter5", [], score, 100.0, diagnosis=diagnosis)


GRADES = [grade("a.py", 57, ["zero fill"]), grade("b.py", 0, [UNRECOGNISED]), grade("c.py", 20, [UNRECOGNISED]),
          grade("d.py", 100, []), grade("e.py", 57, ["zero fill", "no scaling"])]


def test_histogram_labels_lie_inside_the_picture():
    fig = summary.histogram_figure(GRADES)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for label in (fig.axes[0].xaxis.label, fig.axes[0].yaxis.label, fig.axes[0].title):
        box = label.get_window_extent(renderer)
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width and 0 <= box.y0 and box.y1 <= fig.bbox.height, label.get_text()
    assert summary.histogram_png(GRADES).startswith(b"\x89PNG")


def test_unrecognised_is_not_listed_as_a_mistake():
    text = summary.markdown(GRADES)
    section = text.split("## Most common diagnosed mistakes")[1].split("##")[0]
    assert "| zero fill | 2 |" in section and "| no scaling | 1 |" in section
    assert f"| {UNRECOGNISED}" not in section
    assert "no known mistake explains (unrecognised): 2." in section
    assert summary.mistakes(GRADES) == ({"zero fill": 2, "no scaling": 1}, 2)
