//! The link to the Python server (its `tfimg_serving/link.py` says the frames): decoded
//! predicts out, their answers back in any order. Predicts of one key (model, version,
//! signature, inputs past their rows) go in one frame: the first at once, and while one of
//! its frames is out, what comes meanwhile waits and goes together in the next (under
//! TensorFlow Serving's batching, nothing waits here: `Window`).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

/// An array as the link carries it: its dtype, shape and little-endian values.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

/// One value of an array, as its dtype reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Uint(u64),
    F32(f32),
    F64(f64),
}

impl Array {
    /// Its value at `index` (of its values in order); `decode` checked they are all there.
    pub fn value(&self, index: usize) -> Value {
        let size = self.dtype.size();
        let mut eight = [0u8; 8];
        eight[..size].copy_from_slice(&self.data[index * size..(index + 1) * size]);
        let bits = u64::from_le_bytes(eight);
        let signed = |width: u32| ((bits as i64) << (64 - width)) >> (64 - width);
        match self.dtype {
            Dtype::Bool => Value::Bool(bits != 0),
            Dtype::I8 => Value::Int(signed(8)),
            Dtype::I16 => Value::Int(signed(16)),
            Dtype::I32 => Value::Int(signed(32)),
            Dtype::I64 => Value::Int(bits as i64),
            Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => Value::Uint(bits),
            Dtype::F32 => Value::F32(f32::from_bits(bits as u32)),
            Dtype::F64 => Value::F64(f64::from_bits(bits)),
        }
    }

    /// How many values it holds.
    pub fn count(&self) -> usize {
        self.data.len() / self.dtype.size()
    }
}

/// The link's dtypes, tagged with TensorFlow's DataType numbers (gRPC's TensorProto
/// carries them as they are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    F32 = 1,
    F64 = 2,
    I32 = 3,
    U8 = 4,
    I16 = 5,
    I8 = 6,
    I64 = 9,
    Bool = 10,
    U16 = 17,
    U32 = 22,
    U64 = 23,
}

impl Dtype {
    pub fn from_tag(tag: i64) -> Option<Dtype> {
        Some(match tag {
            1 => Dtype::F32,
            2 => Dtype::F64,
            3 => Dtype::I32,
            4 => Dtype::U8,
            5 => Dtype::I16,
            6 => Dtype::I8,
            9 => Dtype::I64,
            10 => Dtype::Bool,
            17 => Dtype::U16,
            22 => Dtype::U32,
            23 => Dtype::U64,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::I16 | Dtype::U16 => 2,
            Dtype::U8 | Dtype::I8 | Dtype::Bool => 1,
        }
    }
}

/// The API a request came by: how its answer is written (REST's JSON, gRPC's protobuf),
/// and which of the link's slots it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    Rest = 0,
    Grpc = 1,
}

/// Which version a request names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Version {
    Highest,
    Number(i64),
    Label(String),
}

/// A predict for the link.
#[derive(Debug, Clone, PartialEq)]
pub struct Predict {
    pub api: Api,
    pub model: String,
    pub version: Version,
    pub signature: String,
    pub inputs: Vec<Array>,
}

impl Predict {
    /// Its rows: its first input's first dimension (0 for an input without one).
    pub fn rows(&self) -> u64 {
        let first = self.inputs.first().and_then(|input| input.shape.first());
        first.copied().unwrap_or(0)
    }
}

/// What the model answered: the version that ran, its signature's name, its outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub version: i64,
    pub signature: String,
    pub outputs: Vec<Array>,
}

/// The link's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Outputs(Found),
    /// The HTTP status, or over gRPC the status code, and the text.
    Error(u16, String),
    /// Not the link's to answer: the request goes to the Python server's HTTP whole.
    Fallback,
    /// The link is not there (the server is starting, or it ended): the same.
    Down,
}

fn put_text(frame: &mut Vec<u8>, text: &str) -> Option<()> {
    let length = u16::try_from(text.len()).ok()?;
    frame.extend_from_slice(&length.to_le_bytes());
    frame.extend_from_slice(text.as_bytes());
    Some(())
}

/// Predicts that may share a frame: the same model, version and signature, and the same
/// inputs (names, dtypes, shapes past the first dimension), each with rows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    api: Api,
    model: String,
    version: Version,
    signature: String,
    inputs: Vec<(String, Dtype, Vec<u64>)>,
}

/// The key of `predict` and its rows; None when it cannot share a frame (an input without
/// dimensions, or inputs of different rows).
pub fn key_of(predict: &Predict) -> Option<(Key, u64)> {
    predict.inputs.first()?.shape.first()?;
    let rows = predict.rows();
    let mut inputs = Vec::with_capacity(predict.inputs.len());
    for input in &predict.inputs {
        let (&first, inner) = input.shape.split_first()?;
        if first != rows {
            return None;
        }
        inputs.push((input.name.clone(), input.dtype, inner.to_vec()));
    }
    let key = Key {
        api: predict.api,
        model: predict.model.clone(),
        version: predict.version.clone(),
        signature: predict.signature.clone(),
        inputs,
    };
    Some((key, rows))
}

/// A frame's bytes after its length: its id, its parts (each request's id and rows), then
/// the first request's model, version and signature and the inputs of all of them, each
/// input's values one request after another (its first dimension their rows together);
/// None when a name is too long for the frame. The parts of a frame of several share a key.
pub fn encode(id: u64, parts: &[(u64, &Predict)]) -> Option<Vec<u8>> {
    let (_, predict) = parts.first()?;
    let size: usize = parts
        .iter()
        .flat_map(|(_, part)| &part.inputs)
        .map(|input| input.data.len())
        .sum();
    let mut frame = Vec::with_capacity(size + 64 + parts.len() * 16);
    frame.extend_from_slice(&id.to_le_bytes());
    frame.extend_from_slice(&u32::try_from(parts.len()).ok()?.to_le_bytes());
    for (id, part) in parts {
        frame.extend_from_slice(&id.to_le_bytes());
        frame.extend_from_slice(&part.rows().to_le_bytes());
    }
    frame.push(predict.api as u8);
    put_text(&mut frame, &predict.model)?;
    match &predict.version {
        Version::Highest => frame.push(0),
        Version::Number(number) => {
            frame.push(1);
            frame.extend_from_slice(&number.to_le_bytes());
        }
        Version::Label(label) => {
            frame.push(2);
            put_text(&mut frame, label)?;
        }
    }
    put_text(&mut frame, &predict.signature)?;
    frame.extend_from_slice(&u16::try_from(predict.inputs.len()).ok()?.to_le_bytes());
    for (index, input) in predict.inputs.iter().enumerate() {
        put_text(&mut frame, &input.name)?;
        frame.push(input.dtype as u8);
        frame.push(u8::try_from(input.shape.len()).ok()?);
        let rows: u64 = parts
            .iter()
            .map(|(_, part)| part.inputs[index].shape.first().copied().unwrap_or(0))
            .sum();
        for (at, dim) in input.shape.iter().enumerate() {
            let dim = if at == 0 && parts.len() > 1 {
                rows
            } else {
                *dim
            };
            frame.extend_from_slice(&dim.to_le_bytes());
        }
        for (_, part) in parts {
            frame.extend_from_slice(&part.inputs[index].data);
        }
    }
    Some(frame)
}

struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, size: usize) -> Option<&'a [u8]> {
        if size > self.data.len() {
            return None;
        }
        let (taken, rest) = self.data.split_at(size);
        self.data = rest;
        Some(taken)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn text(&mut self) -> Option<String> {
        let size = self.u16()? as usize;
        String::from_utf8(self.take(size)?.to_vec()).ok()
    }
}

/// An answer frame after its length: its id and answer; None for a frame that does not
/// hold what it says (a broken link).
pub fn decode(frame: &[u8]) -> Option<(u64, Answer)> {
    let mut cursor = Cursor { data: frame };
    let id = cursor.u64()?;
    let answer = match cursor.u8()? {
        0 => {
            let version = cursor.i64()?;
            let signature = cursor.text()?;
            let count = cursor.u16()?;
            let mut outputs = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let name = cursor.text()?;
                let dtype = Dtype::from_tag(cursor.u8()?.into())?;
                let rank = cursor.u8()?;
                let shape = (0..rank)
                    .map(|_| cursor.u64())
                    .collect::<Option<Vec<u64>>>()?;
                let count = shape.iter().try_fold(1usize, |count, dim| {
                    count.checked_mul(usize::try_from(*dim).ok()?)
                })?;
                let data = cursor.take(count.checked_mul(dtype.size())?)?.to_vec();
                outputs.push(Array {
                    name,
                    dtype,
                    shape,
                    data,
                });
            }
            Answer::Outputs(Found {
                version,
                signature,
                outputs,
            })
        }
        1 => {
            let status = cursor.u16()?;
            let text = String::from_utf8_lossy(cursor.data).into_owned();
            cursor.data = &[];
            Answer::Error(status, text)
        }
        2 => Answer::Fallback,
        _ => return None,
    };
    cursor.data.is_empty().then_some((id, answer))
}

/// Frames of one key the Python server holds at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// One, being run: what comes meanwhile waits here and goes in the next frame,
    /// together, when it is answered, so the server reads, looks up, checks and runs it
    /// once (docs/performance.md: a window of two, one frame running and one ready,
    /// answered 10 % fewer requests).
    One,
    /// Any: each request goes at once. TensorFlow Serving's batching (`--enable-batching`)
    /// counts requests and waits `batch_timeout_micros` for more, so a request held here
    /// would miss the batch that is waiting for it.
    Open,
}

impl Window {
    /// The window for the server's environment: open under TensorFlow Serving's batching,
    /// which the server reads from the same variable (its `settings.BATCHING`: JSON, or
    /// unset, empty or `null` for none).
    pub fn of_batching(batching: Option<&str>) -> Window {
        match batching.map(str::trim) {
            None | Some("" | "null") => Window::One,
            Some(_) => Window::Open,
        }
    }

    fn frames(self) -> usize {
        match self {
            Window::One => 1,
            Window::Open => usize::MAX,
        }
    }
}

/// What one frame holds at most: requests, and bytes of values.
const MOST_PARTS: usize = 256;
const MOST_BYTES: usize = 16 << 20;
/// Requests of one API the link holds at once, here or in the server: past them, each is
/// refused as busy, as the Python server refused them before requests waited here (its
/// MAX_IN_FLIGHT, BUSY and BUSY_CALLS: REST 503, gRPC RESOURCE_EXHAUSTED).
pub const MOST_IN_FLIGHT: usize = 256;
pub const BUSY: &str = "the server is answering 256 requests already: try again shortly";
pub const BUSY_CALLS: &str = "the server is answering 256 calls already: try again shortly";
pub const RESOURCE_EXHAUSTED: u16 = 8;

enum Item {
    Request(Request),
    /// A request of this API and model refused as busy here: the server counts it in its
    /// metrics.
    Busy(Api, String),
}

struct Request {
    predict: Predict,
    reply: oneshot::Sender<Answer>,
}

/// A frame sent and not yet answered whole: its key (None for a request alone) and its
/// parts, each its id, rows and who waits for its answer (None once answered).
struct Sent {
    key: Option<Key>,
    parts: Vec<(u64, u64, Option<oneshot::Sender<Answer>>)>,
}

/// The frames sent and not yet answered, by frame id, and the frame of each part's id.
#[derive(Default)]
struct Waiting {
    frames: HashMap<u64, Sent>,
    parts: HashMap<u64, u64>,
}

impl Waiting {
    /// `answer` given to what `id` names: a frame (each of its parts, outputs split by
    /// their rows) or one part. The key of a frame now answered whole.
    fn answer(&mut self, id: u64, answer: Answer) -> Option<Key> {
        if let Some(sent) = self.frames.remove(&id) {
            for (part, _, _) in &sent.parts {
                self.parts.remove(part);
            }
            let count = sent.parts.len();
            let answers = match answer {
                Answer::Outputs(found) if count > 1 => {
                    let rows: Vec<u64> = sent.parts.iter().map(|part| part.1).collect();
                    let Found {
                        version,
                        signature,
                        outputs,
                    } = found;
                    match split(outputs, &rows) {
                        Some(each) => (each.into_iter())
                            .map(|outputs| {
                                Answer::Outputs(Found {
                                    version,
                                    signature: signature.clone(),
                                    outputs,
                                })
                            })
                            .collect(),
                        None => vec![Answer::Down; count], // not what was asked: the server's own
                    }
                }
                answer => vec![answer; count],
            };
            for ((_, _, reply), answer) in sent.parts.into_iter().zip(answers) {
                if let Some(reply) = reply {
                    let _ = reply.send(answer);
                }
            }
            return sent.key;
        }
        let frame = self.parts.remove(&id)?;
        let sent = self.frames.get_mut(&frame)?;
        if let Some(reply) = sent
            .parts
            .iter_mut()
            .find(|part| part.0 == id)
            .and_then(|part| part.2.take())
        {
            let _ = reply.send(answer);
        }
        if sent.parts.iter().any(|part| part.2.is_some()) {
            return None;
        }
        self.frames.remove(&frame)?.key
    }

    /// The link ended: everyone waiting is told so.
    fn down(&mut self) {
        self.parts.clear();
        for (_, sent) in self.frames.drain() {
            for (_, _, reply) in sent.parts {
                if let Some(reply) = reply {
                    let _ = reply.send(Answer::Down);
                }
            }
        }
    }
}

/// The outputs of a frame of several requests, each split at its rows; None when an
/// output does not have their rows together as its first dimension.
pub fn split(outputs: Vec<Array>, rows: &[u64]) -> Option<Vec<Vec<Array>>> {
    let total: u64 = rows.iter().sum();
    let mut answers = vec![Vec::with_capacity(outputs.len()); rows.len()];
    for output in outputs {
        let (&first, inner) = output.shape.split_first()?;
        if first != total {
            return None;
        }
        // `decode` checked that the values are all there: no product here overflows.
        let row_bytes = inner.iter().product::<u64>() as usize * output.dtype.size();
        let mut at = 0;
        for (answer, &count) in answers.iter_mut().zip(rows) {
            let size = row_bytes * count as usize;
            let mut shape = output.shape.clone();
            shape[0] = count;
            answer.push(Array {
                name: output.name.clone(),
                dtype: output.dtype,
                shape,
                data: output.data[at..at + size].to_vec(),
            });
            at += size;
        }
    }
    Some(answers)
}

/// The link's client: one connection, opened when the first request needs it and again
/// after it ends.
#[derive(Clone)]
pub struct Link {
    sender: mpsc::Sender<Item>,
    /// The requests held, REST's and gRPC's.
    held: [Arc<std::sync::atomic::AtomicUsize>; 2],
}

/// One of the link's requests held: let go when its call ends, answered or dropped.
struct Held(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Link {
    pub fn new(path: PathBuf, window: Window) -> Link {
        let (sender, receiver) = mpsc::channel(1024);
        tokio::spawn(run(path, window, receiver));
        Link {
            sender,
            held: Default::default(),
        }
    }

    pub async fn call(&self, predict: Predict) -> Answer {
        let count = &self.held[predict.api as usize];
        let held = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _held = Held(count.clone());
        if held >= MOST_IN_FLIGHT {
            let _ = (self.sender).try_send(Item::Busy(predict.api, predict.model));
            return match predict.api {
                Api::Rest => Answer::Error(503, BUSY.into()),
                Api::Grpc => Answer::Error(RESOURCE_EXHAUSTED, BUSY_CALLS.into()),
            };
        }
        let (reply, answer) = oneshot::channel();
        let request = Item::Request(Request { predict, reply });
        if self.sender.send(request).await.is_err() {
            return Answer::Down;
        }
        answer.await.unwrap_or(Answer::Down)
    }
}

/// The requests of one key waiting for a frame, and its frames the server holds.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<Request>,
    sent: usize,
}

/// One connection's frames out: requests of a key while its window is full wait and go
/// together; a request with no key goes alone at once.
struct Sender {
    next: u64,
    window: Window,
    queues: HashMap<Key, Queue>,
    alone: Vec<Request>,
    /// Frames that tell the server of requests answered 503 here (u32 parts 0, the model).
    busy: Vec<u8>,
    waiting: Arc<Mutex<Waiting>>,
}

impl Sender {
    fn take(&mut self, item: Item) {
        let request = match item {
            Item::Request(request) => request,
            Item::Busy(api, model) => {
                let mut frame = 0u64.to_le_bytes().to_vec();
                frame.extend_from_slice(&0u32.to_le_bytes());
                frame.push(api as u8);
                if put_text(&mut frame, &model).is_some() {
                    self.busy
                        .extend_from_slice(&(frame.len() as u32).to_le_bytes());
                    self.busy.extend_from_slice(&frame);
                }
                return;
            }
        };
        match key_of(&request.predict) {
            Some((key, _)) => self
                .queues
                .entry(key)
                .or_default()
                .waiting
                .push_back(request),
            None => self.alone.push(request),
        }
    }

    /// The bytes of every frame that may go now.
    fn frames(&mut self) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.busy);
        for request in std::mem::take(&mut self.alone) {
            self.frame(&mut bytes, None, vec![request]);
        }
        let mut ready = Vec::new();
        let window = self.window.frames();
        for (key, queue) in &mut self.queues {
            while queue.sent < window && !queue.waiting.is_empty() {
                let mut parts = Vec::new();
                let mut size = 0;
                while let Some(request) = queue.waiting.front() {
                    let data: usize = request.predict.inputs.iter().map(|i| i.data.len()).sum();
                    if !parts.is_empty() && (parts.len() == MOST_PARTS || size + data > MOST_BYTES)
                    {
                        break;
                    }
                    size += data;
                    parts.extend(queue.waiting.pop_front());
                }
                queue.sent += 1;
                ready.push((key.clone(), parts));
            }
        }
        for (key, parts) in ready {
            self.frame(&mut bytes, Some(key), parts);
        }
        self.queues
            .retain(|_, queue| queue.sent > 0 || !queue.waiting.is_empty());
        bytes
    }

    fn frame(&mut self, bytes: &mut Vec<u8>, key: Option<Key>, parts: Vec<Request>) {
        self.next += 1;
        let id = self.next;
        let ids: Vec<u64> = (0..parts.len() as u64).map(|at| id + 1 + at).collect();
        self.next += parts.len() as u64;
        let tagged: Vec<(u64, &Predict)> = ids
            .iter()
            .zip(&parts)
            .map(|(id, r)| (*id, &r.predict))
            .collect();
        let Some(frame) = encode(id, &tagged) else {
            for request in parts {
                let _ = request.reply.send(Answer::Fallback);
            }
            if let Some(queue) = key.and_then(|key| self.queues.get_mut(&key)) {
                queue.sent -= 1;
            }
            return;
        };
        bytes.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&frame);
        let parts = ids
            .into_iter()
            .zip(parts)
            .map(|(id, request)| (id, request.predict.rows(), Some(request.reply)))
            .collect::<Vec<_>>();
        let mut waiting = self.waiting.lock().unwrap();
        for (part, _, _) in &parts {
            waiting.parts.insert(*part, id);
        }
        waiting.frames.insert(id, Sent { key, parts });
    }

    fn done(&mut self, key: &Key) {
        if let Some(queue) = self.queues.get_mut(key) {
            queue.sent = queue.sent.saturating_sub(1);
        }
    }

    /// The link ended: the requests waiting here are told so too.
    fn down(&mut self) {
        self.waiting.lock().unwrap().down();
        let alone = std::mem::take(&mut self.alone);
        let queued = self.queues.drain().flat_map(|(_, queue)| queue.waiting);
        for request in alone.into_iter().chain(queued) {
            let _ = request.reply.send(Answer::Down);
        }
    }
}

async fn run(path: PathBuf, window: Window, mut requests: mpsc::Receiver<Item>) {
    let mut next = 0u64;
    while let Some(first) = requests.recv().await {
        let Ok(stream) = UnixStream::connect(&path).await else {
            if let Item::Request(first) = first {
                let _ = first.reply.send(Answer::Down);
            }
            continue;
        };
        let (reader, mut writer) = stream.into_split();
        let (finished, mut done) = mpsc::unbounded_channel();
        let mut sender = Sender {
            next,
            window,
            queues: HashMap::new(),
            alone: Vec::new(),
            busy: Vec::new(),
            waiting: Arc::default(),
        };
        let mut answers = tokio::spawn(read_answers(reader, sender.waiting.clone(), finished));
        sender.take(first);
        let mut open = true;
        loop {
            while let Ok(request) = requests.try_recv() {
                sender.take(request);
            }
            let bytes = sender.frames();
            if !bytes.is_empty() && writer.write_all(&bytes).await.is_err() {
                break;
            }
            tokio::select! {
                request = requests.recv() => match request {
                    Some(request) => sender.take(request),
                    None => {
                        open = false;
                        break;
                    }
                },
                Some(key) = done.recv() => {
                    sender.done(&key);
                    while let Ok(key) = done.try_recv() {
                        sender.done(&key);
                    }
                }
                _ = &mut answers => break,
            }
        }
        answers.abort();
        sender.down();
        next = sender.next;
        if !open {
            return;
        }
    }
}

async fn read_answers(
    reader: tokio::net::unix::OwnedReadHalf,
    waiting: Arc<Mutex<Waiting>>,
    finished: mpsc::UnboundedSender<Key>,
) {
    // Answers the server wrote together are read together.
    let mut reader = tokio::io::BufReader::with_capacity(1 << 16, reader);
    loop {
        let mut head = [0u8; 4];
        if reader.read_exact(&mut head).await.is_err() {
            break;
        }
        let mut frame = vec![0u8; u32::from_le_bytes(head) as usize];
        if reader.read_exact(&mut frame).await.is_err() {
            break;
        }
        let Some((id, answer)) = decode(&frame) else {
            break;
        };
        if let Some(key) = waiting.lock().unwrap().answer(id, answer) {
            let _ = finished.send(key);
        }
    }
    waiting.lock().unwrap().down();
}

#[cfg(test)]
mod tests;
