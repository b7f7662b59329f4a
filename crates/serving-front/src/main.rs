//! tfimg-serving-front: the model server's front (docs/performance.md, "A compiled front").
//!
//! `tfimg-serving-front -- python /opt/tfimg/serving.py` starts the Python server with
//! TFIMG_SERVING_FRONT_DIR naming a folder only this user enters, passes it the signals it
//! gets, and ends with it. It holds TensorFlow Serving's REST port (TFIMG_SERVING_PORT):
//! a `:predict` whose body is rows of numbers is decoded here and sent over the link
//! (`link.rs`) to the Python server's workers, which run it as they run REST's; every other
//! request, and any predict the link gives back, goes whole to the Python server's own HTTP
//! on its Unix socket, streamed both ways, so its answers and its limits are the same. It
//! holds the gRPC port too (TFIMG_SERVING_GRPC_PORT, `grpc.rs`), the same way: a `Predict`
//! of numeric tensors over the link, every other call to the Python server's gRPC.

mod conn;
mod grpc;
mod link;
mod predict;
mod proto;

use std::convert::Infallible;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::{header, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::Mutex;

use link::{Answer, Link, Window};

/// The largest body decoded here; larger ones stream to the Python server, which reads
/// them with its limits (size, pace, budget) and off its event loop.
const FAST_BODY_BYTES: u64 = 256 * 1024;
/// A body read here never stalls longer than this, and after BODY_GRACE_SECONDS arrives
/// at BODY_BYTES_PER_SECOND on average (the Python server's limits on the bodies it reads).
const BODY_IDLE_SECONDS: u64 = 10;
const BODY_GRACE_SECONDS: u64 = 10;
const BODY_BYTES_PER_SECOND: u64 = 64 * 1024;
const SLOW_BODY: &str =
    "the request body stopped arriving, or came slower than 64 KiB/s after its first 10 s";
const STARTING: &str = "the model server is starting: try again shortly";

type Body = BoxBody<Bytes, hyper::Error>;

struct Front {
    link: Link,
    http: PathBuf,
    registry: Arc<conn::Registry>,
}

fn main() -> ExitCode {
    let command: Vec<String> = std::env::args()
        .skip_while(|arg| arg != "--")
        .skip(1)
        .collect();
    if command.is_empty() {
        eprintln!("usage: tfimg-serving-front -- COMMAND...: the Python server to start");
        return ExitCode::from(2);
    }
    let ports = [
        ("TFIMG_SERVING_PORT", "8501"),
        ("TFIMG_SERVING_GRPC_PORT", "8500"),
    ]
    .map(
        |(name, default)| match std::env::var(name).as_deref().unwrap_or(default).parse() {
            Ok(port) => Some(port),
            Err(_) => {
                eprintln!("tfimg-serving-front: {name} is not a port");
                None
            }
        },
    );
    let [Some(port), Some(grpc_port)]: [Option<u16>; 2] = ports else {
        return ExitCode::from(2);
    };
    let folder = std::env::temp_dir().join(format!("tfimg-front-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    if let Err(error) = std::fs::DirBuilder::new().mode(0o700).create(&folder) {
        eprintln!("tfimg-serving-front: {}: {error}", folder.display());
        return ExitCode::from(2);
    }
    let mut child = match Command::new(&command[0])
        .args(&command[1..])
        .env("TFIMG_SERVING_FRONT_DIR", &folder)
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!("tfimg-serving-front: cannot start {}: {error}", command[0]);
            return ExitCode::from(2);
        }
    };
    let pid = child.id() as libc::pid_t;
    let window = Window::of_batching(std::env::var("TFIMG_SERVING_BATCHING").ok().as_deref());
    // One thread: the front's ~30 µs a request fits in it at any rate the Python server
    // answers, and a second only wakes to steal work, beside the Python server on the same
    // cores (bench/serving_cpu.py, REST batch 1, 8 clients, alternating: 28-35 against
    // 45-48 µs a request, the server in all 120-152 against 161-172; docs/performance.md).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tfimg-serving-front: {error}");
            return ExitCode::from(2);
        }
    };
    let front = Arc::new(Front {
        link: runtime.block_on(async { Link::new(folder.join("link.sock"), window) }),
        http: folder.join("http.sock"),
        registry: Arc::default(),
    });
    runtime.spawn(front.registry.clone().watch());
    runtime.spawn(forward_signals(pid));
    let grpc = Arc::new(grpc::Grpc {
        link: front.link.clone(),
        socket: folder.join("grpc.sock"),
    });
    runtime.spawn(serve(port, front));
    runtime.spawn(grpc::serve(grpc_port, grpc));
    // The Python server's end is the front's: its status, or 128 and its signal.
    let status = child.wait();
    let _ = std::fs::remove_dir_all(&folder);
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            let code = status
                .code()
                .or(status.signal().map(|signal| 128 + signal))
                .unwrap_or(1);
            ExitCode::from(code as u8)
        }
        Err(_) => ExitCode::from(1),
    }
}

/// The signals that stop a container, passed to the Python server.
async fn forward_signals(pid: libc::pid_t) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut interrupt), Ok(mut hangup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        return;
    };
    loop {
        let number = tokio::select! {
            _ = term.recv() => libc::SIGTERM,
            _ = interrupt.recv() => libc::SIGINT,
            _ = hangup.recv() => libc::SIGHUP,
        };
        // SAFETY: kill(2) on the Python server's pid, a plain system call.
        unsafe {
            libc::kill(pid, number);
        }
    }
}

async fn serve(port: u16, front: Arc<Front>) {
    let listener = match TcpListener::bind(("0.0.0.0", port)).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("tfimg-serving-front: port {port}: {error}");
            std::process::exit(2);
        }
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let front = front.clone();
        let state = front.registry.open(Arc::new(stream));
        tokio::spawn(async move {
            let inner: Arc<Mutex<Option<Inner>>> = Arc::default();
            let io = conn::Watched {
                state: state.clone(),
            };
            let for_requests = state.clone();
            let service = hyper::service::service_fn({
                let front = front.clone();
                move |request| handle(request, front.clone(), inner.clone(), for_requests.clone())
            });
            // hyper's own limit on a head is above MAX_HEADER_BYTES, which `Watched`
            // enforces with the Python server's answer.
            let _ = hyper::server::conn::http1::Builder::new()
                .max_buf_size(conn::MAX_HEADER_BYTES * 2)
                .serve_connection(TokioIo::new(io), service)
                .await;
            front.registry.close(&state);
        });
    }
}

type Inner = hyper::client::conn::http1::SendRequest<Body>;

fn json_answer(status: u16, text: String, close: bool) -> Response<Body> {
    // A status HTTP has no room for (the link's are ApiError's) is the server's failure.
    let status =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let mut answer = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json");
    if close {
        answer = answer.header(header::CONNECTION, "close");
    }
    answer
        .body(
            Full::new(Bytes::from(text))
                .map_err(|never| match never {})
                .boxed(),
        )
        .expect("a response of known parts")
}

fn error_answer(status: u16, message: &str, close: bool) -> Response<Body> {
    json_answer(
        status,
        serde_json::json!({ "error": message }).to_string(),
        close,
    )
}

/// The answer's body, which tells the connection's state when it is written whole (or
/// given up): the connection waits for its next request again.
struct Tracked {
    body: Body,
    state: Arc<conn::State>,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, hyper::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.state.answered();
    }
}

async fn handle(
    request: Request<Incoming>,
    front: Arc<Front>,
    inner: Arc<Mutex<Option<Inner>>>,
    state: Arc<conn::State>,
) -> Result<Response<Tracked>, Infallible> {
    front.registry.request_in(&state);
    let answer = answer(request, &front, &inner, &state).await;
    Ok(answer.map(|body| Tracked { body, state }))
}

async fn answer(
    request: Request<Incoming>,
    front: &Front,
    inner: &Mutex<Option<Inner>>,
    state: &conn::State,
) -> Response<Body> {
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let route = (request.method() == hyper::Method::POST
        && !request.headers().contains_key(header::TRANSFER_ENCODING)
        && length.is_some_and(|length| length <= FAST_BODY_BYTES))
    .then(|| predict::route(request.uri().path()))
    .flatten();
    let Some((model, version)) = route else {
        // Passed on as it comes: the Python server keeps the body's limits.
        state.set_phase_answering();
        return proxy(&front.http, inner, request.map(|body| body.boxed())).await;
    };
    let (parts, body) = request.into_parts();
    let body = read_body(body).await;
    state.set_phase_answering(); // the body is in, or its refusal is being answered
    let body = match body {
        Ok(body) => body,
        Err(answer) => return answer,
    };
    if let Some(predict) = predict::decode(&body, model, version) {
        match front.link.call(predict).await {
            Answer::Outputs(found) => {
                if let Some(text) = predict::answer(&found.outputs) {
                    return json_answer(200, text, false);
                }
            }
            Answer::Error(status, message) => return error_answer(status, &message, false),
            Answer::Fallback | Answer::Down => {}
        }
    }
    let whole = Full::new(body).map_err(|never| match never {}).boxed();
    proxy(&front.http, inner, Request::from_parts(parts, whole)).await
}

/// A body of at most FAST_BODY_BYTES read whole, with the Python server's limits on its
/// pace: no gap over BODY_IDLE_SECONDS, and after BODY_GRACE_SECONDS every byte buys
/// 1/BODY_BYTES_PER_SECOND s more (408 past either, and the connection closes).
async fn read_body(mut body: Incoming) -> Result<Bytes, Response<Body>> {
    let started = tokio::time::Instant::now();
    let mut data = Vec::new();
    loop {
        let paid = Duration::from_secs_f64(data.len() as f64 / BODY_BYTES_PER_SECOND as f64);
        let deadline = (started + Duration::from_secs(BODY_GRACE_SECONDS) + paid)
            .min(tokio::time::Instant::now() + Duration::from_secs(BODY_IDLE_SECONDS));
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(error_answer(408, SLOW_BODY, true)),
            Ok(None) => return Ok(Bytes::from(data)),
            Ok(Some(Err(_))) => {
                return Err(error_answer(400, "the request body ended early", true))
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(chunk) = frame.into_data() {
                    if data.len() + chunk.len() > FAST_BODY_BYTES as usize {
                        return Err(error_answer(
                            413,
                            "the request body is longer than it said",
                            true,
                        ));
                    }
                    data.extend_from_slice(&chunk);
                }
            }
        }
    }
}

/// `request` on this connection's own connection to the Python server's HTTP (opened when
/// first needed, and again when it ended), its answer streamed back.
async fn proxy(
    http: &Path,
    inner: &Mutex<Option<Inner>>,
    request: Request<Body>,
) -> Response<Body> {
    let mut held = inner.lock().await;
    if held.as_ref().is_none_or(|sender| sender.is_closed()) {
        *held = None;
        if let Ok(stream) = UnixStream::connect(http).await {
            if let Ok((sender, connection)) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
            {
                tokio::spawn(connection);
                *held = Some(sender);
            }
        }
    }
    let Some(sender) = held.as_mut() else {
        return error_answer(503, STARTING, false);
    };
    if sender.ready().await.is_err() {
        *held = None;
        return error_answer(503, STARTING, false);
    }
    match sender.send_request(request).await {
        Ok(answer) => answer.map(|body| body.boxed()),
        Err(_) => {
            *held = None;
            error_answer(502, "the model server closed the request", true)
        }
    }
}
