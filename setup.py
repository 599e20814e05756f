"""Only what pyproject.toml cannot say: `attention_grader.pth` goes to the top of site-packages, so that
`pytest --submission` is pinned before pytest reads any configuration (grader/frontends/pytest_pin.py), in a
wheel (`pip install .`) and in an editable install (`pip install -e .`) alike."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "attention_grader.pth"


class BuildPy(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:
            self.copy_file(PTH, str(Path(self.build_lib, PTH)), preserve_mode=0)


class EditableWheel(editable_wheel):
    def _create_wheel_file(self, bdist_wheel):  # the editable wheel holds only a finder's .pth: add ours beside it
        from wheel.wheelfile import WheelFile  # what editable_wheel itself writes with

        path = super()._create_wheel_file(bdist_wheel)
        with WheelFile(path, "a") as whl:
            whl.write(PTH, PTH)
        return path


setup(cmdclass={"build_py": BuildPy, "editable_wheel": EditableWheel})
