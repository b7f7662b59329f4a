//! TensorFlow Serving's gRPC API on its port (TFIMG_SERVING_GRPC_PORT): a
//! `PredictionService/Predict` whose tensors are numbers or bools is decoded here
//! (`proto.rs`) and run over the link as REST's predicts are; every other call, and any
//! predict the link gives back, passes whole to the Python server's gRPC on its Unix
//! socket (one connection there for each client's), streamed both ways with its trailers,
//! so its answers and limits stay what they were.
//!
//! Trust boundary, client → server, as the Python server's `grpc_api.unary` drew it: at
//! most STREAMS_PER_CONNECTION calls open on a connection (HTTP/2's setting); past
//! ROOM_AT connections a new one closes the one without a call for longest (one that never
//! made a call counts from its start), and past MOST_CONNECTIONS, none being idle, the new
//! one is closed; a Predict's message arrives within MESSAGE_SECONDS
//! (DEADLINE_EXCEEDED), holding nothing but its stream while it comes, and takes one of the
//! link's gRPC slots only once it is in (RESOURCE_EXHAUSTED past MOST_IN_FLIGHT); a
//! message over FAST_MESSAGE_BYTES, or compressed, streams to the Python server, which
//! reads it with its limits (its size, and the same pace).

use std::convert::Infallible;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use prost::Message;
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::{Mutex, Notify};

use crate::link::{Answer, Link};
use crate::{proto, Body, STARTING};

/// The Python server's limits, kept here for the calls decoded here (its settings'
/// STREAMS_PER_CONNECTION, MESSAGE_SECONDS and SLOW_MESSAGE).
const STREAMS_PER_CONNECTION: u32 = 100;
const MESSAGE_SECONDS: u64 = 30;
const SLOW_MESSAGE: &str = "the request message did not arrive within 30 s";
/// The largest message decoded here; larger ones stream to the Python server.
const FAST_MESSAGE_BYTES: usize = 1 << 20;
/// Connections open at once: past ROOM_AT a new one closes the one idle longest; past
/// MOST_CONNECTIONS (none idle) the new one is closed.
const ROOM_AT: usize = 1024;
const MOST_CONNECTIONS: usize = 4096;
/// A call's headers together (grpcio's default limit on metadata is 8 KiB).
const MOST_HEADER_BYTES: u32 = 16 << 10;
const PREDICT: &str = "/tensorflow.serving.PredictionService/Predict";

/// gRPC's status codes the front answers with itself.
const OK: u16 = 0;
const DEADLINE_EXCEEDED: u16 = 4;
const UNAVAILABLE: u16 = 14;

pub struct Grpc {
    pub link: Link,
    /// The Python server's gRPC socket.
    pub socket: PathBuf,
}

pub async fn serve(port: u16, grpc: Arc<Grpc>) {
    let listener = match TcpListener::bind(("0.0.0.0", port)).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("tfimg-serving-front: gRPC port {port}: {error}");
            std::process::exit(2);
        }
    };
    let connections = Arc::new(Connections::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Some(connection) = connections.open() else {
            continue; // dropped: closed
        };
        let _ = stream.set_nodelay(true);
        let grpc = grpc.clone();
        let connections = connections.clone();
        tokio::spawn(async move {
            let upstream: Arc<Mutex<Option<Upstream>>> = Arc::default();
            let calls = connection.clone();
            let service = hyper::service::service_fn(move |request| {
                let call = Call::new(calls.clone());
                let (grpc, upstream) = (grpc.clone(), upstream.clone());
                async move {
                    let answer = handle(request, grpc, upstream).await;
                    drop(call);
                    answer
                }
            });
            let served = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .max_concurrent_streams(STREAMS_PER_CONNECTION)
                .max_header_list_size(MOST_HEADER_BYTES)
                .keep_alive_interval(Some(Duration::from_secs(60)))
                .keep_alive_timeout(Duration::from_secs(20))
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(served);
            tokio::select! {
                _ = served.as_mut() => {}
                _ = connection.close.notified() => {
                    served.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(5), served).await;
                }
            }
            connections.closed(&connection);
        });
    }
}

/// A connection's calls being answered, when it last had none, and its order to close.
struct Connection {
    calls: AtomicUsize,
    idle_since: std::sync::Mutex<Instant>,
    close: Notify,
}

/// The gRPC connections open.
#[derive(Default)]
struct Connections {
    open: std::sync::Mutex<Vec<Arc<Connection>>>,
}

impl Connections {
    /// A new connection's state; past ROOM_AT the connection idle longest is told to
    /// close, and past MOST_CONNECTIONS with none idle the new one is refused (None).
    fn open(&self) -> Option<Arc<Connection>> {
        let mut open = self.open.lock().unwrap();
        if open.len() >= ROOM_AT {
            let idle = (open.iter().enumerate())
                .filter(|(_, connection)| connection.calls.load(Ordering::SeqCst) == 0)
                .min_by_key(|(_, connection)| *connection.idle_since.lock().unwrap())
                .map(|(index, _)| index);
            match idle {
                Some(index) => open.swap_remove(index).close.notify_one(),
                None if open.len() >= MOST_CONNECTIONS => return None,
                None => {}
            }
        }
        let connection = Arc::new(Connection {
            calls: AtomicUsize::new(0),
            idle_since: std::sync::Mutex::new(Instant::now()),
            close: Notify::new(),
        });
        open.push(connection.clone());
        Some(connection)
    }

    fn closed(&self, connection: &Arc<Connection>) {
        let mut open = self.open.lock().unwrap();
        if let Some(index) = open.iter().position(|c| Arc::ptr_eq(c, connection)) {
            open.swap_remove(index);
        }
    }
}

/// A call being answered on a connection: while one is, the connection is not idle.
struct Call(Arc<Connection>);

impl Call {
    fn new(connection: Arc<Connection>) -> Call {
        connection.calls.fetch_add(1, Ordering::SeqCst);
        Call(connection)
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        *self.0.idle_since.lock().unwrap() = Instant::now();
        self.0.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

type Upstream = hyper::client::conn::http2::SendRequest<Body>;

async fn handle(
    request: Request<Incoming>,
    grpc: Arc<Grpc>,
    upstream: Arc<Mutex<Option<Upstream>>>,
) -> Result<Response<Body>, Infallible> {
    let grpc_call = (request.headers().get(CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc"));
    if request.uri().path() != PREDICT || !grpc_call {
        return Ok(proxy(&grpc, &upstream, request.map(|body| body.boxed())).await);
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(Duration::from_secs(MESSAGE_SECONDS), first_message(body));
    let Ok(read) = read.await else {
        return Ok(status_only(DEADLINE_EXCEEDED, SLOW_MESSAGE));
    };
    let decoded = read
        .message()
        .and_then(|message| proto::PredictRequest::decode(message).ok())
        .and_then(|request| {
            let model = request.model_spec.as_ref()?.name.clone();
            Some((model, proto::predict_of(request)?))
        });
    if let Some((model, predict)) = decoded {
        match grpc.link.call(predict).await {
            Answer::Outputs(found) => {
                return Ok(message_answer(&proto::response_of(model, found)));
            }
            Answer::Error(code, text) => return Ok(status_only(code, &text)),
            Answer::Fallback | Answer::Down => {}
        }
    }
    let body = Prefixed {
        prefix: Some(read.bytes.freeze()),
        rest: read.rest,
    };
    Ok(proxy(&grpc, &upstream, Request::from_parts(parts, body.boxed())).await)
}

/// What was read of a call's body: its bytes, and the rest of it when it did not end.
struct Read {
    bytes: BytesMut,
    rest: Option<Incoming>,
    /// The message's length when it is whole in `bytes` (uncompressed, at most
    /// FAST_MESSAGE_BYTES).
    length: Option<usize>,
}

impl Read {
    fn message(&self) -> Option<&[u8]> {
        Some(&self.bytes[5..5 + self.length?])
    }
}

/// The body read until its first message is in, or shows it is not the front's to decode.
async fn first_message(mut body: Incoming) -> Read {
    let mut bytes = BytesMut::new();
    loop {
        if bytes.len() >= 5 {
            let length = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
            if bytes[0] != 0 || length > FAST_MESSAGE_BYTES {
                return Read {
                    bytes,
                    rest: Some(body),
                    length: None,
                };
            }
            if bytes.len() >= 5 + length {
                return Read {
                    bytes,
                    rest: Some(body),
                    length: Some(length),
                };
            }
        }
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(data.chunk());
                }
            }
            // It ended (or broke) before its message: the Python server says so.
            _ => {
                return Read {
                    bytes,
                    rest: None,
                    length: None,
                }
            }
        }
    }
}

/// The call passed whole to the Python server's gRPC, on this client connection's own
/// connection there (opened when first needed, again when it closed: the server may close
/// it, `--grpc-channel-arguments grpc.max_connection_age_ms`, and a call it did not take
/// goes again on a new one).
async fn proxy(
    grpc: &Grpc,
    upstream: &Mutex<Option<Upstream>>,
    request: Request<Body>,
) -> Response<Body> {
    let (mut parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
    let Ok(uri) = format!("http://localhost{path}").parse() else {
        return status_only(UNAVAILABLE, STARTING);
    };
    parts.uri = uri;
    let mut request = Request::from_parts(parts, body);
    for _ in 0..2 {
        let sender = {
            let mut upstream = upstream.lock().await;
            match upstream.as_ref().filter(|sender| !sender.is_closed()) {
                Some(sender) => Some(sender.clone()),
                None => {
                    let opened = open(grpc).await;
                    upstream.clone_from(&opened);
                    opened
                }
            }
        };
        let Some(mut sender) = sender else {
            break;
        };
        match sender.try_send_request(request).await {
            Ok(answer) => return answer.map(|body| body.boxed()),
            Err(mut error) => match error.take_message() {
                Some(again) => request = again,
                None => break,
            },
        }
    }
    status_only(UNAVAILABLE, STARTING)
}

async fn open(grpc: &Grpc) -> Option<Upstream> {
    let stream = UnixStream::connect(&grpc.socket).await.ok()?;
    let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .adaptive_window(true)
        .max_header_list_size(MOST_HEADER_BYTES * 4)
        .handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(connection);
    Some(sender)
}

/// A gRPC answer of one message, then its trailers (status OK).
fn message_answer(message: &impl Message) -> Response<Body> {
    let length = message.encoded_len();
    let mut data = Vec::with_capacity(5 + length);
    data.push(0);
    data.extend_from_slice(&(length as u32).to_be_bytes());
    message
        .encode(&mut data)
        .expect("a Vec has room for any message");
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(OK));
    let body = Full::new(Bytes::from(data))
        .map_err(|never| match never {})
        .with_trailers(async { Some(Ok(trailers)) });
    Response::builder()
        .header(CONTENT_TYPE, "application/grpc")
        .body(body.boxed())
        .expect("a response of known parts")
}

/// A gRPC answer without a message: its status in the headers (gRPC's trailers-only).
pub fn status_only(code: u16, message: &str) -> Response<Body> {
    let body = Empty::new().map_err(|never| match never {});
    let mut answer = Response::builder()
        .header(CONTENT_TYPE, "application/grpc")
        .header("grpc-status", HeaderValue::from(code));
    if let Ok(value) = HeaderValue::from_str(&percent_encoded(message)) {
        answer = answer.header("grpc-message", value);
    }
    answer
        .body(body.boxed())
        .expect("a response of known parts")
}

/// gRPC's encoding of a status message: bytes outside printable ASCII, and `%`, as %XX.
pub fn percent_encoded(text: &str) -> String {
    const STATUS_MESSAGE: &AsciiSet = &CONTROLS.add(b'%');
    utf8_percent_encode(text, STATUS_MESSAGE).to_string()
}

/// A call's body again: the bytes read here, then what is left of it.
struct Prefixed {
    prefix: Option<Bytes>,
    rest: Option<Incoming>,
}

impl hyper::body::Body for Prefixed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        if let Some(prefix) = self.prefix.take().filter(|prefix| !prefix.is_empty()) {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        match self.rest.as_mut() {
            Some(rest) => Pin::new(rest).poll_frame(context),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.as_ref().is_none_or(|prefix| prefix.is_empty())
            && self.rest.as_ref().is_none_or(|rest| rest.is_end_stream())
    }
}

#[cfg(test)]
mod tests;
