"""Which grader this is: the teacher's, with the reference, or a student build, with the teacher's recorded answers
in its place (checks.known_answers). Everything that differs between the two is here, as one object that `Grading`
is handed: the check context, the draws, the example plan and the planted bugs diagnosis compares with."""

from __future__ import annotations

from collections.abc import Callable

from grader.checks import draws as drawing, known_answers
from grader.checks.core import Ctx
from grader.grading import plan


class Teacher:
    """The teacher's grader: the reference and the planted bugs are here, the draws are the course's."""

    known: dict | None = None  # what its gradings drew, kept for the next one (checks.replay.Replay.known)

    def context(self, **fields) -> Ctx:
        return Ctx(**fields)

    def draws(self) -> drawing.Draws:
        return drawing.course()

    def plan(self, rubric, draws: drawing.Draws, record: Callable[[], dict], works: tuple | None = None) -> dict:
        """works: the input forms the submission handles, where it handles fewer than the exercise's."""
        return plan.get(rubric, draws, record, works)

    def variants(self, exercise):
        return exercise.variants

    def part(self, name: str) -> Teacher:
        """The build that grades part `name` of a rubric in parts (engine.Parts): the teacher's grader is one for all."""
        return self


class Recording(Teacher):
    """The teacher's grader writing every answer of the reference into a book (what `bundle student` ships)."""

    def __init__(self, book: known_answers.Book):
        self.book = book
        self.known: dict = {}  # its gradings draw alike: a check's examples, drawn in one form, serve every other

    def context(self, **fields) -> Ctx:
        return known_answers.recording(self.book)(**fields)

    def plan(self, rubric, draws, record, works=None) -> dict:
        return self.book.plan  # the one its first grading drew (student_build.record)


class Student(Teacher):
    """A student build: answers, plan and the planted bugs' results from its book, drawn with its own salt."""

    def __init__(self, book: known_answers.Book):
        self.book = book

    def context(self, **fields) -> Ctx:
        return known_answers.replaying(self.book)(**fields)

    def draws(self) -> drawing.Draws:
        return self.book.draws()

    def plan(self, rubric, draws, record, works=None) -> dict:
        """What its answers were recorded on: it has no reference to record with. Code that handles only some
        forms (adapted public code) replays the plan drawn within them, as the teacher's grader does."""
        return self.book.reach_plans.get(repr(works), self.book.plan)

    def variants(self, exercise):
        return self.book.variants(exercise.variants)

    def part(self, name: str) -> Student:
        """A part's answers, plan and planted bugs are its own book's, recorded on its reference with its overrides."""
        return Student(self.book.part(name))


def here() -> Teacher:
    """This installation's build: a student build where a book ships, else the teacher's grader."""
    book = known_answers.book()
    return Student(book) if book is not None else Teacher()
