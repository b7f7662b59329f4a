//! The build context as a deterministic tar: entries sorted by path, every header with the
//! same mtime, uid/gid 0 and explicit modes, so the same files give the same bytes (and
//! the same build key) on every machine. Streamed to the daemon in fixed-size chunks from
//! a blocking thread, so memory stays bounded whatever the context's size.

use std::io::{self, Write};
use std::path::PathBuf;

use bytes::Bytes;
use futures_util::Stream;
use sha2::{Digest, Sha256};

use crate::render::Rendered;

/// Every entry's mtime: 2000-01-01T00:00:00Z (not 0, which some archivers refuse).
pub const FIXED_MTIME: u64 = 946_684_800;

/// Chunk size of the stream to the daemon.
const CHUNK: usize = 256 * 1024;

/// Chunks in flight between the tar thread and the HTTP body.
const CHANNEL_DEPTH: usize = 4;

#[derive(Debug, Clone)]
enum Source {
    Bytes(Bytes),
    /// A file on disk, read while streaming.
    File(PathBuf),
}

#[derive(Debug, Clone)]
struct Entry {
    path: String,
    mode: u32,
    source: Source,
}

/// The files of one build context.
#[derive(Debug, Clone, Default)]
pub struct BuildContext {
    entries: Vec<Entry>,
}

impl BuildContext {
    /// The Dockerfile and generated files of a render.
    pub fn from_rendered(rendered: &Rendered) -> BuildContext {
        let mut context = BuildContext::default();
        context.add_bytes(
            "Dockerfile",
            0o644,
            rendered.dockerfile.clone().into_bytes(),
        );
        for (path, file) in &rendered.files {
            context.add_bytes(path, file.mode, file.contents.clone());
        }
        context
    }

    pub fn add_bytes(&mut self, path: &str, mode: u32, contents: Vec<u8>) {
        self.insert(Entry {
            path: path.to_string(),
            mode,
            source: Source::Bytes(Bytes::from(contents)),
        });
    }

    /// Adds a file from disk, keeping only its executable bit (0755 or 0644).
    pub fn add_file(&mut self, path: &str, executable: bool, source: PathBuf) {
        self.insert(Entry {
            path: path.to_string(),
            mode: if executable { 0o755 } else { 0o644 },
            source: Source::File(source),
        });
    }

    fn insert(&mut self, entry: Entry) {
        match self
            .entries
            .binary_search_by(|existing| existing.path.cmp(&entry.path))
        {
            Ok(index) => self.entries[index] = entry,
            Err(index) => self.entries.insert(index, entry),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the tar to `writer`.
    pub fn write_tar(&self, writer: impl Write) -> io::Result<()> {
        let mut builder = tar::Builder::new(writer);
        for entry in &self.entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(entry.mode);
            header.set_uid(0);
            header.set_gid(0);
            header.set_mtime(FIXED_MTIME);
            match &entry.source {
                Source::Bytes(bytes) => {
                    header.set_size(bytes.len() as u64);
                    builder.append_data(&mut header, &entry.path, bytes.as_ref())?;
                }
                Source::File(path) => {
                    let file = std::fs::File::open(path).map_err(|error| {
                        io::Error::new(error.kind(), format!("`{}`: {error}", path.display()))
                    })?;
                    header.set_size(file.metadata()?.len());
                    builder.append_data(&mut header, &entry.path, file)?;
                }
            }
        }
        builder.into_inner()?.flush()
    }

    /// sha256 of the tar, without keeping it in memory.
    pub fn digest(&self) -> io::Result<[u8; 32]> {
        let mut hasher = HashWriter(Sha256::new());
        self.write_tar(&mut hasher)?;
        Ok(hasher.0.finalize().into())
    }

    /// The tar as a stream of chunks, produced on a blocking thread.
    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
        let (sender, receiver) =
            tokio::sync::mpsc::channel::<Result<Bytes, io::Error>>(CHANNEL_DEPTH);
        tokio::task::spawn_blocking(move || {
            let mut writer = ChunkWriter {
                buffer: Vec::with_capacity(CHUNK),
                sender: sender.clone(),
            };
            let result = self
                .write_tar(&mut writer)
                .and_then(|()| writer.send_buffer());
            if let Err(error) = result {
                // The receiver may be gone already (the daemon hung up): nothing to tell.
                let _ = sender.blocking_send(Err(error));
            }
        });
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|item| (item, receiver))
        })
    }
}

struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.update(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct ChunkWriter {
    buffer: Vec<u8>,
    sender: tokio::sync::mpsc::Sender<Result<Bytes, io::Error>>,
}

impl ChunkWriter {
    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK));
        self.sender
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the daemon stopped reading the context",
                )
            })
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = CHUNK - self.buffer.len();
        let taken = room.min(data.len());
        self.buffer.extend_from_slice(&data[..taken]);
        if self.buffer.len() == CHUNK {
            self.send_buffer()?;
        }
        Ok(taken)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BuildContext {
        let mut context = BuildContext::default();
        context.add_bytes("b.txt", 0o644, b"second".to_vec());
        context.add_bytes("Dockerfile", 0o644, b"FROM scratch\n".to_vec());
        context.add_bytes("a/run.sh", 0o755, b"#!/bin/sh\n".to_vec());
        context
    }

    #[test]
    fn tar_is_sorted_fixed_and_identical_every_time() {
        let mut first = Vec::new();
        sample().write_tar(&mut first).unwrap();
        let mut second = Vec::new();
        sample().write_tar(&mut second).unwrap();
        assert_eq!(first, second);
        let mut archive = tar::Archive::new(first.as_slice());
        let entries: Vec<(String, u32, u64, u64)> = archive
            .entries()
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let header = entry.header();
                (
                    entry.path().unwrap().display().to_string(),
                    header.mode().unwrap(),
                    header.mtime().unwrap(),
                    header.uid().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            entries,
            [
                ("Dockerfile".to_string(), 0o644, FIXED_MTIME, 0),
                ("a/run.sh".to_string(), 0o755, FIXED_MTIME, 0),
                ("b.txt".to_string(), 0o644, FIXED_MTIME, 0),
            ]
        );
        assert_eq!(sample().digest().unwrap(), sample().digest().unwrap());
    }

    #[tokio::test]
    async fn the_stream_carries_the_same_bytes_in_bounded_chunks() {
        use futures_util::StreamExt;
        let mut context = sample();
        context.add_bytes("big.bin", 0o644, vec![7u8; 3 * CHUNK + 17]);
        let mut expected = Vec::new();
        context.write_tar(&mut expected).unwrap();
        let mut streamed = Vec::new();
        let mut stream = Box::pin(context.into_stream());
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.unwrap();
            assert!(chunk.len() <= CHUNK);
            streamed.extend_from_slice(&chunk);
        }
        assert_eq!(streamed, expected);
    }
}
