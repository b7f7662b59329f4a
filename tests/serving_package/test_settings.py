"""The server's settings come from the environment the image's entrypoint gives it."""

import ast
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


def test_grpc_channel_arguments_come_after_the_server_s_own_and_replace_them():
    arguments = '[["grpc.max_receive_message_length", 1024], ["grpc.lb_policy_name", "grpclb"]]'
    script = "from tfimg_serving.grpc_api import server_options; print(server_options())"
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "TFIMG_SERVING_GRPC_CHANNEL_ARGUMENTS": arguments},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    options = dict(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    assert options == {
        "grpc.max_receive_message_length": 1024,
        "grpc.max_send_message_length": -1,
        "grpc.max_concurrent_streams": 100,
        "grpc.lb_policy_name": "grpclb",
    }


def test_the_model_config_poll_is_the_server_s_own_second_unless_given():
    script = "from tfimg_serving import settings as s; print(s.MODEL_CONFIG_POLL_SECONDS)"
    for given, read in ((None, "1.0"), ("0", "0.0"), ("60", "60.0")):
        environment = {**os.environ}
        if given is not None:
            environment["TFIMG_SERVING_MODEL_CONFIG_POLL"] = given
        done = subprocess.run(
            [sys.executable, "-c", script], env=environment, capture_output=True, text=True
        )
        assert (done.returncode, done.stdout.strip()) == (0, read), done.stderr
