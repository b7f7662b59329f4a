"""tfimg's model server (`tfimg serve`, the `serving` service), shipped inside tfimg's
binary and copied to /opt/tfimg/tfimg_serving in the image; /opt/tfimg/serving.py starts it.

TensorFlow Serving's REST API on port TFIMG_SERVING_PORT (8501) for every SavedModel under
TFIMG_SERVING_MODELS/NAME/VERSION/ (/models/NAME/VERSION/: numbered folders; the highest
version is served, and a new one is picked up without a restart), or for the models of a
model config file (TFIMG_SERVING_MODEL_CONFIG: TensorFlow Serving's text format, its version
policies and labels; reread when it changes, or sent with gRPC's HandleReloadConfigRequest, which
only `tfimg serve --allow-reload-config` turns on: TFIMG_SERVING_ALLOW_RELOAD_CONFIG). A
SavedModel written by TensorFlow 2 runs through its functions; one written by
TensorFlow 1 (Estimator exports, tf.compat.v1) runs in a session, its tensors fed and
fetched by name as TensorFlow Serving does (`SessionSignature`):

  GET  /v1/models/NAME[/versions/N|/labels/L]                  status
  GET  /v1/models/NAME[/versions/N|/labels/L]/metadata         signatures
  POST /v1/models/NAME[/versions/N|/labels/L]:predict          {"instances": ...} or {"inputs": ...}
  POST /v1/models/NAME[/versions/N|/labels/L]:classify|regress {"examples": [...], "context": {...}}
  GET  /monitoring/prometheus/metrics                           TensorFlow Serving's metrics

and its gRPC API on port TFIMG_SERVING_GRPC_PORT (8500): PredictionService and ModelService,
from the tensorflow-serving-api package's protos: the same models, the same errors, as
TensorFlow Serving's status codes.

As TensorFlow Serving's own handler (`http_rest_api_util.cc`) matches them: the path's
words in any case (`/V1/MODELS/m`), though only a lowercase verb is one; a version too
large for int64 is a 400; a label names a version only in a model config file (400
"Unrecognized servable version label" otherwise), and the status answers for every
version whatever the label.
Errors are {"error": "..."} with TensorFlow Serving's codes (400 bad request, 404 unknown
model or version) and HTTP's for the limits below (408 too slow, 413 too large, 431
headers too large, 503 busy).

Trust boundary, client → server (DESIGN.md): whoever reaches the ports is on the other
side and controls every byte of a request (and when it arrives, and which calls it
makes); the model, its folder and this server are on ours. This package is the one place
that enforces the boundary: `rest` takes the bytes (timeouts for headers and
bodies, caps on their sizes and on what a body may cost decoded, bounded concurrency,
connections made room for by closing the silent longest, 400, never 500 and never a
traceback, for any client input), `grpc_api` the calls (a deadline for the
message, streams capped per connection, a slot only once the message is in, no reload
unless asked), `tensors` the values (refused rather than coerced), and
`metrics` keeps series only for the models configured.

The HTTP server is uvicorn (uvloop's event loop, httptools' parser): one event loop reads
each request whole, then answers it, at most MAX_IN_FLIGHT at once (503 beyond); a
request takes its slot only once its body is in. The model
runs on one worker thread per signature of the served version, never on the loop: the
requests that queued while it ran one call are merged into its next call (their rows
concatenated, then split back), as TensorFlow Serving's batching does, without waiting
for more. So 8 clients at batch 1 cost a few model calls, not 8; a lone request runs at
once. Only signatures whose every input and output has two dimensions or more, the first
unknown (the batch), are merged, at most MAX_BATCH_ROWS rows; TFIMG_SERVING_MAX_BATCH=1
turns merging off. A body over LARGE_BODY_BYTES is decoded and answered on a thread of
its own (LARGE_AT_ONCE such at once), so one big request does not hold up the others'
small ones.

The modules, by concern: `settings` (the environment and the limits), `errors`, `metrics`,
`tensors` (JSON and TensorProto <-> numpy), `batching` (the workers that merge requests, and
TensorFlow Serving's batching), `servables` (a loaded version, its signatures, its warm-up),
`model_config` and `models` (what is served, and watching for changes), `inference` (predict,
classify and regress, shared by both APIs), `rest` (HTTP) and `grpc_api` (gRPC); `__main__`
starts them. Its unit tests are tests/serving_package/ (run in the serving image by
tests/serving_package.rs).

In the serving images the compiled front, /opt/tfimg/tfimg-serving-front
(crates/serving-front), holds both ports and starts this server with
TFIMG_SERVING_FRONT_DIR (FRONT_DIR): then its HTTP and its gRPC listen on Unix sockets in
that folder, for every request the front passes on whole, and `link` serves the predicts
the front decoded (REST's rows of numbers, gRPC's numeric tensors) on a third.
"""
