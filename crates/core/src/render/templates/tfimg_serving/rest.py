"""TensorFlow Serving's REST API over uvicorn: the client → server boundary for HTTP."""

import asyncio
import heapq
import json
import re
import time

import numpy as np
import orjson
import prometheus_client
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .errors import FAILED, ApiError, client_text
from .inference import classify_or_regress, predict
from .metrics import METRICS_PATH, REGISTRY, record_request, status_name
from .settings import (
    BODY_BUDGET,
    BODY_BYTES_PER_SECOND,
    BODY_GRACE_SECONDS,
    BODY_IDLE_SECONDS,
    BUSY,
    CONNECTIONS,
    HEADER_SECONDS,
    INT64_MAX,
    LARGE_AT_ONCE,
    LARGE_BODY_BYTES,
    MAX_BODY_BYTES,
    MAX_DECODED_BYTES,
    MAX_HEADER_BYTES,
    MAX_IN_FLIGHT,
    OPEN_CONNECTIONS,
    SLOW_BODY,
    TOO_LARGE,
    WRITE_SECONDS,
    log,
)
from .tensors import to_json

ROUTE = re.compile(
    r"^/v1/models(?:/(?P<name>[^/:]+))?(?:/versions/(?P<version>[0-9]+)|/labels/(?P<label>[^/:]+))?"
    r"(?:/(?P<metadata>metadata)|:(?P<verb>classify|regress|predict))?$",
    re.IGNORECASE,
)
VERBS = ("predict", "classify", "regress")


# --- HTTP: the client → server boundary ---------------------------------------------------
#
# Clients are on the other side: anyone who reaches the port sends whatever bytes they
# like, as slowly or as fast as they like. What they control is the request's bytes
# (headers, body, the JSON in it) and when those arrive. This module is the one place
# that takes them, and each costs the server no more than the limits above:
#   - headers: whole within HEADER_SECONDS and MAX_HEADER_BYTES, else 408 or 431
#     (`Protocol`: uvicorn has neither limit);
#   - the body: at most MAX_BODY_BYTES (413), arriving with no gap over BODY_IDLE_SECONDS
#     and, after BODY_GRACE_SECONDS, at BODY_BYTES_PER_SECOND on average (408); the bodies
#     held at once at most BODY_BUDGET bytes (503);
#   - a request slot (MAX_IN_FLIGHT, 503 beyond) only once the body is in, so a slow client
#     holds one connection until a timeout frees it, never a slot;
#   - the answer: a client that reads nothing of it for WRITE_SECONDS (the server's
#     buffers full) loses its connection, and with it the request slot (`Protocol`:
#     uvicorn waits for such a reader forever);
#   - connections: a request whose headers are in, finding CONNECTIONS open, closes those
#     the server waits on that went longest without a byte (`make_room`; 408), so a slow
#     client that reconnects each connection as it is cut keeps no one out, from whatever
#     address (every client on the host comes through Docker's proxy, from one address:
#     a cap per address would put them all with the attacker); past OPEN_CONNECTIONS a new
#     connection does the same, which bounds what silent connections hold;
#   - the JSON: refused (413) before it is parsed when its values would take over
#     MAX_DECODED_BYTES, its text and bytes let go of once parsed, its lists of numbers
#     given to numpy as they are (no second copy, never a string array), and let go of
#     before the model runs; large bodies LARGE_AT_ONCE at a time;
#   - the answer to any client input is 2xx or 4xx with {"error": ...}; no response carries
#     a Python traceback (`client_text`), and a failure of the server itself is logged
#     here and answered 500 without its details.


class Request:
    """One request: its method and path, then its body once read whole (handed over to
    the JSON parser, which lets go of it) and the bytes it holds in the body budget."""

    def __init__(self, method, path):
        self.method, self.path = method, path
        self.body = None
        self.held = 0


class Capacity:
    """What the server gives its clients at once: the bytes of the request bodies it holds
    (being received, or waiting for their answer) and the requests it answers. Used on the
    event loop only."""

    def __init__(self):
        self.held = 0
        self.in_flight = 0

    def hold(self, request, size):
        if self.held + size > BODY_BUDGET:
            busy = (
                f"the server holds {BODY_BUDGET} bytes of request bodies already: try again shortly"
            )
            raise ApiError(503, busy)
        self.held += size
        request.held += size

    def release(self, request):
        self.held -= request.held
        request.held = 0


EVICTED = (
    "the server closed this connection for another client: it holds {connections} connections, "
    "and this request had gone longest without a byte ({silent:.1f} s)"
)


def raw_answer(status, message):
    """A whole HTTP/1.1 error response that closes the connection, for the protocol, which
    answers before there is a request for the application."""
    reasons = {408: "Request Timeout", 431: "Request Header Fields Too Large"}
    payload = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {reasons[status]}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + payload


class Protocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 connection (httptools' parser) with the two limits it lacks on a
    request's headers: they arrive whole within HEADER_SECONDS, counted from the connection
    or from the first byte of a later request on a kept-alive one, and take at most
    MAX_HEADER_BYTES. Past either the client gets 408 or 431 (a connection that sent
    nothing is just closed) and the connection ends. uvicorn's own timeout only runs between
    requests: without this, clients that never finish their headers hold their connections
    forever, and CONNECTIONS of them lock everyone out; and a URL or header of gigabytes
    would be kept in memory whole.

    And a request whose headers are in, finding CONNECTIONS open (where uvicorn answers
    503), makes room (`make_room`): the connections the server waits on that have gone
    longest without a byte are closed. A timeout alone frees a slow connection only for the
    client that held it to open the next one: a client that reconnected each as it was cut
    kept everyone else at 503. Only a whole request makes room, so slow clients do not
    close each other's connections over and over; past OPEN_CONNECTIONS (silent ones
    included) a new connection makes room too, which bounds what they may hold."""

    header_timer = None
    write_timer = None  # runs while the client reads nothing of an answer (`pause_writing`)
    header_bytes = 0
    begun = False  # some of a request's head arrived
    refused = False  # answered here: what else arrives is ignored
    last_heard = 0.0  # the loop's time of the client's last bytes (or of the connection)

    def connection_made(self, transport):
        super().connection_made(transport)
        self.last_heard = self.loop.time()
        self.start_header_timer()
        if len(self.connections) > OPEN_CONNECTIONS:
            make_room(self, len(self.connections) - OPEN_CONNECTIONS)

    def data_received(self, data):
        self.last_heard = self.loop.time()
        if self.refused:
            return
        idle = self.cycle is None or self.cycle.response_complete
        if idle and self.header_timer is None:  # bytes after an answer: a request is due
            self.start_header_timer()
        super().data_received(data)

    def on_message_begin(self):
        if self.refused:
            return
        super().on_message_begin()
        self.begun, self.header_bytes = True, 0
        if self.header_timer is None:  # a pipelined request
            self.start_header_timer()

    def on_url(self, url):
        if self.count_header_bytes(len(url)):
            super().on_url(url)

    def on_header(self, name, value):
        if self.count_header_bytes(len(name) + len(value)):
            super().on_header(name, value)

    def on_headers_complete(self):
        if self.refused:
            return
        self.stop_header_timer()
        self.begun = False
        if len(self.connections) >= CONNECTIONS:
            make_room(self, len(self.connections) - CONNECTIONS + 1)
        super().on_headers_complete()

    def on_body(self, body):
        if not self.refused:
            super().on_body(body)

    def on_message_complete(self):
        if not self.refused:
            super().on_message_complete()

    def connection_lost(self, exc):
        self.stop_header_timer()
        self.stop_write_timer()
        super().connection_lost(exc)

    def pause_writing(self):
        # The transport's buffer is full: the client has stopped reading its answer.
        super().pause_writing()
        if self.write_timer is None:
            self.write_timer = self.loop.call_later(WRITE_SECONDS, self.reads_too_slowly)

    def resume_writing(self):
        super().resume_writing()
        self.stop_write_timer()

    def stop_write_timer(self):
        if self.write_timer is not None:
            self.write_timer.cancel()
            self.write_timer = None

    def reads_too_slowly(self):
        """The client read nothing of its answer for WRITE_SECONDS: the connection is cut,
        which ends the answer (uvicorn's `send` returns once the connection is lost) and
        frees its request slot."""
        self.write_timer = None
        log.warning(
            "a client read nothing of its answer for %d s: its connection is closed", WRITE_SECONDS
        )
        self.transport.abort()

    def start_header_timer(self):
        self.header_timer = self.loop.call_later(HEADER_SECONDS, self.headers_too_slow)

    def stop_header_timer(self):
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def count_header_bytes(self, size):
        if self.refused:
            return False
        self.header_bytes += size
        if self.header_bytes > MAX_HEADER_BYTES:
            self.refuse(
                431,
                f"the request's headers are over the server's limit of {MAX_HEADER_BYTES} bytes",
            )
            return False
        return True

    def headers_too_slow(self):
        self.header_timer = None
        if self.begun:
            self.refuse(408, f"the request's headers did not arrive within {HEADER_SECONDS} s")
        else:
            self.refuse(None, None)

    def refuse(self, status, message):
        self.refused = True
        self.stop_header_timer()
        if not self.transport.is_closing():
            if status is not None:
                self.transport.write(raw_answer(status, message))
            self.transport.close()

    def waits_for_client(self):
        """Whether the server waits on the client: for a request (an idle kept-alive
        connection, or headers on their way) or for the rest of a body. A request whose
        body is in is being answered, and its connection is not the client's to lose."""
        if self.refused or self.transport.is_closing() or self.pipeline:
            return False
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return True
        return cycle.more_body and not cycle.response_started

    def close_for_room(self):
        """Closed for another client: 408 for a request on its way (one that had not begun
        is just closed, as the keep-alive timeout closes it)."""
        silent = self.loop.time() - self.last_heard
        on_its_way = self.begun or (self.cycle is not None and not self.cycle.response_complete)
        message = EVICTED.format(connections=len(self.connections), silent=silent)
        self.refuse(408 if on_its_way else None, message if on_its_way else None)
        self.connections.discard(self)


def make_room(making, count):
    """Closes `count` of the connections the server waits on (`waits_for_client`), those
    that have gone longest without a byte, for the connection `making` room. A client that
    sends its request is not closed while others wait silently: stalled or trickled headers
    and bodies and idle kept-alive connections go first, whatever address they come from.
    When too few connections wait (every one has a request being answered), fewer are
    closed, and uvicorn answers 503."""
    waiting = (
        connection
        for connection in making.connections
        if connection is not making and connection.waits_for_client()
    )
    for connection in heapq.nsmallest(count, waiting, key=lambda connection: connection.last_heard):
        connection.close_for_room()


async def handle(models, request, match):
    """The answer to one request of the API; `match` is ROUTE's match of its path."""
    method, path = request.method, request.path
    verb = match and match["verb"]
    # A POST needs a model and a verb, written in lowercase (the route matches `:PREDICT`,
    # as TensorFlow Serving's does, which then knows no such verb); a GET has no verb.
    if (
        match is None
        or method != ("POST" if verb else "GET")
        or (verb and (verb not in VERBS or not match["name"]))
    ):
        # As TensorFlow Serving: its API's paths are bad requests, others are not found.
        status = 400 if path[:4].lower() == "/v1/" else 404
        raise ApiError(status, f"Malformed request: {method} {path[:200]}")
    name = match["name"]
    if not name:
        raise ApiError(400, "Missing model name in request.")
    version = path_version(match["version"])
    if verb is None and match["metadata"] != "metadata":
        # The status, for every version when a label is given. `/METADATA` asks for it too:
        # TensorFlow Serving matches the word in any case but compares it in lowercase.
        return models.status(name, version)
    servable = models.get(name, version, match["label"])
    if verb is None:
        return {
            "model_spec": {"name": name, "signature_name": "", "version": str(servable.version)},
            "metadata": {"signature_def": {"signature_def": servable.signature_defs}},
        }
    body = parse_json(request)
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if verb == "predict":
        return await predict(servable, body)
    return await classify_or_regress(servable, body, verb)


def path_version(text):
    """The version a path names, as TensorFlow Serving reads it: one that does not fit an
    int64 is refused (never looked for: no version that large can exist)."""
    if text is None:
        return None
    if len(text.lstrip("0")) > 19 or int(text) > INT64_MAX:
        raise ApiError(400, f"Failed to convert version: {text[:200]} to numeric.")
    return int(text)


def parse_json(request):
    """The request's body as JSON; the body's bytes and text are let go of as soon as they
    are parsed. Refused before parsing: a body whose values would take over
    MAX_DECODED_BYTES as Python objects (413), as `decoded_size` estimates it. JSON nested
    past Python's recursion limit is refused (400) by the parser itself.

    orjson parses it (a batch of 32 rows in a tenth of the json module's time), unless it
    cannot: JSON's extensions TensorFlow Serving reads (NaN, Infinity, -Infinity), another
    encoding than UTF-8, a lone surrogate, nesting past 1024, a number past float64 (1e400)
    go to the json module, which reads them as before or names what is wrong. So does a
    body with a run of 20 digits, which may be an integer past uint64: orjson reads one as
    a float, json as the integer it is (then refused for an int input, as it was)."""
    data, request.body = request.body or b"null", None
    size = decoded_size(data) if len(data) * MOST_PER_BYTE > MAX_DECODED_BYTES else 0
    if size > MAX_DECODED_BYTES:
        raise ApiError(
            413,
            f"the request's JSON holds too many values: about {size >> 20} MiB once decoded, over "
            f"the server's limit of {MAX_DECODED_BYTES >> 20} MiB; send fewer rows a request",
        )
    if b"0" * 20 not in data.translate(ZEROED_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the json module reads it (NaN, UTF-16, a lone surrogate) or says why not
    try:
        text = data.decode(json.detect_encoding(data), "surrogatepass")
        del data
        return json.loads(text)
    except ValueError as error:
        raise ApiError(400, f"JSON Parse error: {error}") from None
    except RecursionError:
        raise ApiError(400, "JSON Parse error: the JSON is nested too deeply") from None


# Every digit made 0: a run of 20 digits is then a plain substring search (a regex for it
# backtracks at every digit, 500 µs on a batch of 32 rows).
ZEROED_DIGITS = bytes.maketrans(b"123456789", b"000000000")


# The most `decoded_size` counts for one byte of text (a `{`: an object and a value, and
# the byte): a body shorter than MAX_DECODED_BYTES / MOST_PER_BYTE (about 930 KiB) is
# never over the limit, and is not counted (5 passes over a batch of 32 rows, 70 µs).
MOST_PER_BYTE = 240 + 40 + 1


def decoded_size(data):
    """An upper estimate of what json.loads makes of `data` (CPython, 64-bit), from the
    characters that open or separate values (those inside strings too, so it never falls
    short): a list takes 56 bytes and a slot of 8 per item, an object 240 and about 100 a
    key, a number 32 (a float, or an int, and its slot), a string 56 and its text. So
    `[[0],[0],...]` (3 bytes of text for 64 of list) is refused unparsed, and rows of
    floats are estimated at 3 to 5 times their text."""
    lists, objects = data.count(b"["), data.count(b"{")
    values = data.count(b",") + lists + objects + 1
    strings = data.count(b'"') // 2
    return (
        64 * lists + 240 * objects + 100 * data.count(b":") + 40 * values + 56 * strings + len(data)
    )


async def read_body(scope, receive, request, capacity):
    """The request's body into `request.body` (left None when the client goes away), each
    chunk counted in the body budget as it arrives. Refused, and the connection closed with
    the answer: a body over MAX_BODY_BYTES (413, from its Content-Length alone when it has
    one); a body that stalls for BODY_IDLE_SECONDS, or arrives slower than
    BODY_BYTES_PER_SECOND once BODY_GRACE_SECONDS are spent (408: every byte that arrives
    buys 1/BODY_BYTES_PER_SECOND s more, so a client that trickles a byte at a time is cut
    off within seconds, and a large body on a slow link is not); a chunk past the budget
    (503)."""
    length = dict(scope["headers"]).get(b"content-length", b"")
    if length.isdigit() and (len(length) > 12 or int(length) > MAX_BODY_BYTES):
        raise ApiError(413, TOO_LARGE)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BODY_GRACE_SECONDS
    buffer = bytearray()
    while True:
        wait = min(BODY_IDLE_SECONDS, deadline - loop.time())
        if wait <= 0:
            raise ApiError(408, SLOW_BODY)
        message = await within(wait, receive)
        if message["type"] == "http.disconnect":
            return
        chunk = message.get("body", b"")
        if len(buffer) + len(chunk) > MAX_BODY_BYTES:
            raise ApiError(413, TOO_LARGE)
        capacity.hold(request, len(chunk))
        buffer += chunk
        deadline += len(chunk) / BODY_BYTES_PER_SECOND
        if not message.get("more_body"):
            request.body = buffer
            return


async def within(seconds, receive):
    """`await receive()`, or ApiError 408 after `seconds`. asyncio.wait_for would do, but it
    makes a task (and takes a turn of the loop) for every chunk of every request."""
    task = asyncio.current_task()
    expired = []

    def expire():
        expired.append(True)
        task.cancel()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        return await receive()
    except asyncio.CancelledError:
        if expired:
            if hasattr(task, "uncancel"):  # Python 3.11+: the task is not being cancelled
                task.uncancel()
            raise ApiError(408, SLOW_BODY) from None
        raise
    finally:
        timer.cancel()


async def respond(models, request):
    """The status, bytes and content type that answer one request whose body is in: JSON,
    or the metrics in Prometheus' text format."""
    if request.path == METRICS_PATH and request.method == "GET":
        return (
            200,
            prometheus_client.generate_latest(REGISTRY),
            prometheus_client.CONTENT_TYPE_LATEST,
        )
    started = time.perf_counter()
    match = ROUTE.match(request.path)
    status, payload = await respond_json(models, request, match)
    if match and match["name"]:
        api = match["verb"] or ("metadata" if match["metadata"] else "status")
        record_request(models, match["name"], api.lower(), "REST", status_name(status), started)
    return status, payload, JSON


JSON = "application/json"


async def respond_json(models, request, match):
    """The status and JSON bytes that answer one request of the API."""
    try:
        status, answer = 200, await handle(models, request, match)
    except ApiError as error:
        status, answer = error.status, {"error": client_text(error)}
    except RecursionError:  # only the client's JSON is walked recursively
        status, answer = 400, {"error": "the request's JSON is nested too deeply"}
    except Exception:  # a bug, or a model failing on its own: logged, never shown
        log.exception("%s %s failed", request.method, request.path[:200])
        status, answer = 500, {"error": FAILED}
    return status, encode(answer)


def encode(answer):
    """The answer's JSON bytes. orjson writes them, numpy arrays included (float32 in its
    shortest form, as `to_json` writes it), some 20 times faster than lists through the json
    module. But orjson writes NaN and ±Infinity as `null`, where TensorFlow Serving writes
    NaN, Infinity and -Infinity: an answer whose text holds `null` (only such a value makes
    one, or a string that holds the word) is written again by the json module."""
    payload = orjson.dumps(answer, default=as_json, option=orjson.OPT_SERIALIZE_NUMPY)
    if b"null" in payload:
        payload = json.dumps(answer, default=as_json).encode()
    return payload


def as_json(value):
    """What orjson and json do not write themselves: a numpy array that is not C-contiguous
    or holds objects, a numpy scalar (for json)."""
    if isinstance(value, np.ndarray):
        return to_json(value, "", as_lists=True)
    if isinstance(value, np.generic):
        return to_json(np.asarray(value), "", as_lists=True)
    raise TypeError(f"{type(value).__name__} is not JSON")


def answer_apart(models, request):
    """`respond` on an event loop of this worker thread's own: a large body's JSON is read,
    converted and written here, while the main loop goes on serving everyone else."""
    return asyncio.run(respond(models, request))


def application(models):
    capacity = Capacity()
    large = None  # made on the server's loop, at its first request

    async def app(scope, receive, send):
        nonlocal large
        if scope["type"] != "http":
            return
        if large is None:
            large = asyncio.Semaphore(LARGE_AT_ONCE)
        started = []

        async def tracked_send(message):
            started.append(True)
            await send(message)

        try:
            await serve_one(models, capacity, large, scope, receive, tracked_send)
        except Exception:  # last resort: the client learns that it failed, not how
            log.exception("%s %s failed", scope.get("method"), str(scope.get("path"))[:200])
            if not started:
                await answer(send, 500, json.dumps({"error": FAILED}).encode(), close=True)

    return app


async def serve_one(models, capacity, large, scope, receive, send):
    """One request: its body read whole (no slot is taken while it arrives), then a slot,
    then the answer. The body counts in the budget until its answer is ready."""
    request = Request(scope["method"], scope["path"])
    try:
        try:
            await read_body(scope, receive, request, capacity)
        except ApiError as error:  # the rest of the body is not read: the connection ends
            await answer(send, error.status, json.dumps({"error": str(error)}).encode(), close=True)
            return
        if request.body is None:  # the client went away
            return
        if capacity.in_flight >= MAX_IN_FLIGHT:
            await answer(send, 503, json.dumps({"error": BUSY}).encode(), close=False)
            return
        capacity.in_flight += 1
        try:
            if len(request.body) > LARGE_BODY_BYTES:  # on the default executor's bounded pool
                async with large:
                    status, payload, kind = await asyncio.to_thread(answer_apart, models, request)
            else:
                status, payload, kind = await respond(models, request)
        finally:
            capacity.in_flight -= 1
        capacity.release(request)  # a client slow to read its answer holds neither
        await answer(send, status, payload, close=False, kind=kind)
    finally:
        capacity.release(request)


async def answer(send, status, payload, close, kind=JSON):
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(payload)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
