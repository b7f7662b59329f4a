// A prototype of the model server's compiled front, measured in docs/performance.md ("A
// compiled front, measured"); never shipped. MODE=python-merges: each request goes to
// worker_merges.py at once, tagged; otherwise the front merges what queued for worker.py.
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

struct Job {
    rows: u32,
    data: Vec<f32>,
    reply: oneshot::Sender<Result<(u32, Vec<f32>), String>>,
}

async fn dispatcher(mut rx: mpsc::Receiver<Job>, path: String, cols: u32, max_rows: u32) {
    let mut sock = UnixStream::connect(&path).await.expect("worker socket");
    let mut held: Option<Job> = None;
    loop {
        let first = match held.take() {
            Some(job) => job,
            None => match rx.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        let mut rows = first.rows;
        let mut group = vec![first];
        while let Ok(job) = rx.try_recv() {
            if rows + job.rows > max_rows {
                held = Some(job);
                break;
            }
            rows += job.rows;
            group.push(job);
        }
        let mut frame = Vec::with_capacity(8 + (rows * cols * 4) as usize);
        frame.extend_from_slice(&rows.to_le_bytes());
        frame.extend_from_slice(&cols.to_le_bytes());
        for job in &group {
            for v in &job.data {
                frame.extend_from_slice(&v.to_le_bytes());
            }
        }
        sock.write_all(&frame).await.unwrap();
        let mut head = [0u8; 8];
        sock.read_exact(&mut head).await.unwrap();
        let out_rows = u32::from_le_bytes(head[..4].try_into().unwrap());
        let out_cols = u32::from_le_bytes(head[4..].try_into().unwrap());
        let mut body = vec![0u8; (out_rows * out_cols * 4) as usize];
        sock.read_exact(&mut body).await.unwrap();
        let values: Vec<f32> = body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let mut start = 0usize;
        for job in group {
            let n = (job.rows * out_cols) as usize;
            let _ = job
                .reply
                .send(Ok((out_cols, values[start..start + n].to_vec())));
            start += n;
        }
    }
}

/// Per-request mode: each request goes to Python at once, tagged; Python merges.
async fn per_request(mut rx: mpsc::Receiver<Job>, path: String, cols: u32) {
    let sock = UnixStream::connect(&path).await.expect("worker socket");
    let (mut read, mut write) = sock.into_split();
    let waiting: Arc<std::sync::Mutex<std::collections::HashMap<u64, Job>>> = Default::default();
    let table = waiting.clone();
    tokio::spawn(async move {
        loop {
            let mut head = [0u8; 16];
            if read.read_exact(&mut head).await.is_err() {
                return;
            }
            let id = u64::from_le_bytes(head[..8].try_into().unwrap());
            let rows = u32::from_le_bytes(head[8..12].try_into().unwrap());
            let out_cols = u32::from_le_bytes(head[12..].try_into().unwrap());
            let mut body = vec![0u8; (rows * out_cols * 4) as usize];
            read.read_exact(&mut body).await.unwrap();
            let values: Vec<f32> = body
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let job = table.lock().unwrap().remove(&id).unwrap();
            let _ = job.reply.send(Ok((out_cols, values)));
        }
    });
    let mut next = 0u64;
    while let Some(job) = rx.recv().await {
        next += 1;
        let mut frame = Vec::with_capacity(16 + job.data.len() * 4);
        frame.extend_from_slice(&next.to_le_bytes());
        frame.extend_from_slice(&job.rows.to_le_bytes());
        frame.extend_from_slice(&cols.to_le_bytes());
        for v in &job.data {
            frame.extend_from_slice(&v.to_le_bytes());
        }
        waiting.lock().unwrap().insert(next, job);
        write.write_all(&frame).await.unwrap();
    }
}

async fn handle(
    req: Request<Incoming>,
    tx: Arc<mpsc::Sender<Job>>,
    cols: u32,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(Response::builder()
                .status(400)
                .body(Full::new(Bytes::new()))
                .unwrap())
        }
    };
    let value: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return Ok(Response::builder()
                .status(400)
                .body(Full::new(Bytes::from(format!("{{\"error\":\"{e}\"}}"))))
                .unwrap())
        }
    };
    let instances = value["instances"].as_array().cloned().unwrap_or_default();
    let mut data = Vec::with_capacity(instances.len() * cols as usize);
    for row in &instances {
        for v in row.as_array().map(|r| r.as_slice()).unwrap_or(&[]) {
            data.push(v.as_f64().unwrap_or(0.0) as f32);
        }
    }
    let (reply, answer) = oneshot::channel();
    tx.send(Job {
        rows: instances.len() as u32,
        data,
        reply,
    })
    .await
    .unwrap();
    let (out_cols, values) = answer.await.unwrap().unwrap();
    let mut text = String::with_capacity(values.len() * 12 + 20);
    text.push_str("{\"predictions\":[");
    for (i, row) in values.chunks(out_cols as usize).enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push('[');
        for (j, v) in row.iter().enumerate() {
            if j > 0 {
                text.push(',');
            }
            text.push_str(&format!("{v:?}"));
        }
        text.push(']');
    }
    text.push_str("]}");
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(text)))
        .unwrap())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let listen = args[1].clone();
    let path = args[2].clone();
    let cols: u32 = args[3].parse().unwrap();
    let threads: usize = args.get(4).map(|t| t.parse().unwrap()).unwrap_or(2);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async move {
            let (tx, rx) = mpsc::channel(1024);
            if std::env::var("MODE").as_deref() == Ok("python-merges") {
                tokio::spawn(per_request(rx, path, cols));
            } else {
                tokio::spawn(dispatcher(rx, path, cols, 1024));
            }
            let tx = Arc::new(tx);
            let listener = TcpListener::bind(&listen).await.unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                stream.set_nodelay(true).unwrap();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |req| handle(req, tx.clone(), cols));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
}
