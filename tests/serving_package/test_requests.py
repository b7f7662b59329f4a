"""What the HTTP side makes of a request's path and body, and what a client may read of an
error: the client → server boundary's pure parts."""

import threading
import time

import prometheus_client
from conftest import refused

from tfimg_serving.errors import client_text
from tfimg_serving.metrics import REGISTRY, forget_series, record_request, status_name
from tfimg_serving.rest import ROUTE, Request, decoded_size, parse_json, path_version
from tfimg_serving.settings import MAX_DECODED_BYTES


def test_paths_match_as_tensorflow_serving_s_handler_matches_them():
    match = ROUTE.match("/V1/MODELS/m/versions/007:predict")
    assert (match["name"], match["version"], match["verb"]) == ("m", "007", "predict")
    assert ROUTE.match("/v1/models/m/labels/stable/metadata")["label"] == "stable"
    assert ROUTE.match("/v1/models/m:explain") is None
    assert path_version("007") == 7
    assert path_version(None) is None
    message = refused(lambda: path_version("9223372036854775808"))
    assert message == "Failed to convert version: 9223372036854775808 to numeric."


def body(data):
    request = Request("POST", "/v1/models/m:predict")
    request.body = data
    return request


def test_json_parses_with_tensorflow_serving_s_extensions_and_lets_go_of_the_body():
    request = body(b'{"instances": [[1.5, NaN, -Infinity]]}')
    parsed = parse_json(request)
    assert parsed["instances"][0][0] == 1.5 and parsed["instances"][0][2] == float("-inf")
    assert request.body is None, "the body's bytes are let go of once parsed"
    # A run of 20 digits may be an integer past uint64: read as the integer it is.
    assert parse_json(body(b"[18446744073709551616]")) == [18446744073709551616]
    assert refused(lambda: parse_json(body(b'{"instances": ['))).startswith("JSON Parse error: ")


def test_a_body_that_would_cost_too_much_decoded_is_refused_before_parsing():
    # 3 bytes of text make a 64-byte list: 100 MB of `[0],` would take gigabytes.
    lists = b"[" + b"[0]," * (MAX_DECODED_BYTES // 64) + b"[0]]"
    assert decoded_size(lists) > MAX_DECODED_BYTES
    message = refused(lambda: parse_json(body(lists)), status=413)
    assert message.startswith("the request's JSON holds too many values: about ")
    floats = b"[" + b"0.123456789," * 1000 + b"0.5]"
    assert len(floats) < decoded_size(floats) < 6 * len(floats)


def test_a_client_reads_the_error_without_tensorflow_s_frames_or_a_traceback():
    text = (
        "Graph execution error:\n\n"
        "Detected at node 'model/dense/MatMul' defined at (most recent call last):\n"
        '    File "/usr/lib/python3.9/runpy.py", line 197, in _run_module_as_main\n'
        "      return _run_code(code, main_globals, None,\n"
        "Node: 'model/dense/MatMul'\n"
        "Matrix size-incompatible: In[0]: [1,3], In[1]: [4,8]\n"
        "\t [[{{node model/dense/MatMul}}]] [Op:__inference_predict_function_85]"
    )
    assert client_text(text) == "Matrix size-incompatible: In[0]: [1,3], In[1]: [4,8]"
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    f()\n'
    assert client_text(traceback) == "the request was refused"
    assert len(client_text("x" * 5000)) == 1000


class Models:
    """What the metrics need of the server's models: their lock and the names configured."""

    def __init__(self, configured):
        self.lock, self.configured = threading.Lock(), set(configured)


def series(model):
    text = prometheus_client.generate_latest(REGISTRY).decode()
    return [line for line in text.splitlines() if f'model_name="{model}"' in line]


def test_metrics_keep_series_only_for_models_configured_and_forget_them_on_request():
    models = Models(["kept"])
    record_request(models, "kept", "predict", "REST", "OK", time.perf_counter())
    for made_up in ("a", "b", "c"):
        record_request(models, made_up, "predict", "GRPC", "NOT_FOUND", time.perf_counter())
    assert any("request_count" in line for line in series("kept"))
    assert series("a") == [] and any('status="NOT_FOUND"' in line for line in series(""))
    forget_series("kept")
    assert series("kept") == []
    assert (status_name(200), status_name(404), status_name(500)) == ("OK", "NOT_FOUND", "INTERNAL")
