"""The server's settings come from the environment the image's entrypoint gives it."""

import os
import subprocess
import sys


def settings_with(**environment):
    """The settings a fresh interpreter reads under `environment`: (exit code, its output)."""
    script = (
        "from tfimg_serving import settings as s; "
        "print(s.MODELS, s.PORT, s.GRPC_PORT, s.MAX_BATCH_ROWS, s.BATCH_THREADS)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout.strip() + done.stderr.strip()


def test_the_entrypoint_s_environment_names_the_folder_and_the_ports():
    code, out = settings_with(
        TFIMG_SERVING_MODELS="/srv/m", TFIMG_SERVING_PORT="9001", TFIMG_SERVING_GRPC_PORT="9000"
    )
    assert (code, out) == (0, "/srv/m 9001 9000 256 None")


def test_tensorflow_serving_s_batching_parameters_set_the_batch_limit():
    batching = (
        '{"max_batch_size": 16, "batch_timeout_micros": 1000, "max_enqueued_batches": 4, '
        '"num_batch_threads": 3, "allowed_batch_sizes": [8, 16]}'
    )
    assert settings_with(TFIMG_SERVING_BATCHING=batching) == (0, "/models 8501 8500 16 3")


def test_a_max_batch_that_is_no_count_of_rows_stops_the_server_naming_it():
    code, out = settings_with(TFIMG_SERVING_MAX_BATCH="0")
    assert code == 1
    assert out.endswith(
        "TFIMG_SERVING_MAX_BATCH must be a whole number of rows, 1 or more; got '0'"
    )
