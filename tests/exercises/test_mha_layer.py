"""CS336's layer of given weights: what the verdict matrix does not say."""

from conftest import SUBMISSIONS, assert_full_marks

from grader.exercises.mha_layer import GRADS_NOTE


def test_a_layer_that_copies_the_weights_into_modules_gets_a_note_not_a_failure(grade_of):
    """incfly's adapter loads the given weights into its own Linear modules (load_state_dict), as CS336's adapters
    do: no gradient reaches the weights it was given, which the worker says as data (StudentError.unreached)."""
    grade = grade_of(SUBMISSIONS / "mha_layer" / "public_incfly.py", "mha_layer")
    assert_full_marks(grade)
    assert GRADS_NOTE in grade.notes
