//! The link to the Python server (its `tfimg_serving/link.py` says the frames): decoded
//! predicts out, each tagged and sent at once, their answers back in any order.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

/// An array as the link carries it: its dtype tag, shape and little-endian values.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F64 = 1,
    I64 = 2,
    Bool = 3,
    U64 = 4,
}

impl Dtype {
    fn from_tag(tag: u8) -> Option<Dtype> {
        Some(match tag {
            1 => Dtype::F64,
            2 => Dtype::I64,
            3 => Dtype::Bool,
            4 => Dtype::U64,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            Dtype::Bool => 1,
            _ => 8,
        }
    }
}

/// Which version a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    Highest,
    Number(i64),
    Label(String),
}

/// A predict for the link.
#[derive(Debug, Clone, PartialEq)]
pub struct Predict {
    pub model: String,
    pub version: Version,
    pub signature: String,
    pub inputs: Vec<Array>,
}

/// The link's answer.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Outputs(Vec<Array>),
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

/// The request's frame after its length and id; None when a name is too long for it.
pub fn encode(predict: &Predict) -> Option<Vec<u8>> {
    let size: usize = predict
        .inputs
        .iter()
        .map(|input| input.data.len() + 64)
        .sum();
    let mut frame = Vec::with_capacity(size + 64);
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
    for input in &predict.inputs {
        put_text(&mut frame, &input.name)?;
        frame.push(input.dtype as u8);
        frame.push(u8::try_from(input.shape.len()).ok()?);
        for dim in &input.shape {
            frame.extend_from_slice(&dim.to_le_bytes());
        }
        frame.extend_from_slice(&input.data);
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
            let count = cursor.u16()?;
            let mut outputs = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let name = cursor.text()?;
                let dtype = Dtype::from_tag(cursor.u8()?)?;
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
            Answer::Outputs(outputs)
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

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Answer>>>>;

/// The link's client: one connection, opened when the first request needs it and again
/// after it ends.
#[derive(Clone)]
pub struct Link {
    sender: mpsc::Sender<(Vec<u8>, oneshot::Sender<Answer>)>,
}

impl Link {
    pub fn new(path: PathBuf) -> Link {
        let (sender, receiver) = mpsc::channel(1024);
        tokio::spawn(run(path, receiver));
        Link { sender }
    }

    pub async fn call(&self, predict: &Predict) -> Answer {
        let Some(frame) = encode(predict) else {
            return Answer::Fallback;
        };
        let (reply, answer) = oneshot::channel();
        if self.sender.send((frame, reply)).await.is_err() {
            return Answer::Down;
        }
        answer.await.unwrap_or(Answer::Down)
    }
}

async fn run(path: PathBuf, mut requests: mpsc::Receiver<(Vec<u8>, oneshot::Sender<Answer>)>) {
    let mut next = 0u64;
    while let Some((frame, reply)) = requests.recv().await {
        let Ok(stream) = UnixStream::connect(&path).await else {
            let _ = reply.send(Answer::Down);
            continue;
        };
        let (reader, mut writer) = stream.into_split();
        let waiting: Waiting = Arc::default();
        let answers = tokio::spawn(read_answers(reader, waiting.clone()));
        let mut pending = Some((frame, reply));
        loop {
            let first = match pending.take() {
                Some(request) => request,
                None => match requests.recv().await {
                    Some(request) => request,
                    None => return,
                },
            };
            // The requests that queued meanwhile go in the same write.
            let mut batch = vec![first];
            while batch.len() < 256 {
                match requests.try_recv() {
                    Ok(request) => batch.push(request),
                    Err(_) => break,
                }
            }
            let mut bytes = Vec::new();
            {
                let mut waiting = waiting.lock().unwrap();
                for (frame, reply) in batch {
                    next += 1;
                    bytes.extend_from_slice(&((frame.len() + 8) as u32).to_le_bytes());
                    bytes.extend_from_slice(&next.to_le_bytes());
                    bytes.extend_from_slice(&frame);
                    waiting.insert(next, reply);
                }
            }
            if writer.write_all(&bytes).await.is_err() || answers.is_finished() {
                break;
            }
        }
        answers.abort();
        for (_, reply) in waiting.lock().unwrap().drain() {
            let _ = reply.send(Answer::Down);
        }
    }
}

async fn read_answers(reader: tokio::net::unix::OwnedReadHalf, waiting: Waiting) {
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
        if let Some(reply) = waiting.lock().unwrap().remove(&id) {
            let _ = reply.send(answer);
        }
    }
    for (_, reply) in waiting.lock().unwrap().drain() {
        let _ = reply.send(Answer::Down);
    }
}

#[cfg(test)]
mod tests;
