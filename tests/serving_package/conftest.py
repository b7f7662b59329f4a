"""Shared helpers for the model server's unit tests."""

import pytest
import tensorflow as tf

from tfimg_serving.errors import ApiError


def spec(dtype, shape=(None,)):
    """An input's TensorSpec, as a signature gives it."""
    return tf.TensorSpec(shape, dtype)


def refused(call, status=400):
    """The message of the ApiError `call` raises, after checking its HTTP status."""
    with pytest.raises(ApiError) as caught:
        call()
    assert caught.value.status == status, caught.value
    return str(caught.value)
