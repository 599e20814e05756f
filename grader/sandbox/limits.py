"""What one submission's workers may use: a rubric's [limits] table, validated where it is defined."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")
    load_timeout: float = Field(default=10, gt=0)  # seconds to run the file
    call_timeout: float = Field(default=5, gt=0)  # seconds per call of the function
    total_timeout: float = Field(default=60, gt=0)  # worker seconds for the whole submission
    memory_mb: int = Field(default=4096, ge=256)
    output_kb: int = Field(default=1024, ge=1)
    max_processes: int = Field(default=64, ge=1)
    # what the grader reads of a submission before any wall is up (submission.staging): a pasted data literal
    # would otherwise cost the grader's own parser seconds and gigabytes
    max_source_kb: int = Field(default=2048, ge=16)  # a .py file, a notebook's code cells, a folder's Python together
    max_notebook_kb: int = Field(default=20480, ge=16)  # a notebook, its outputs included, and a folder's files together
