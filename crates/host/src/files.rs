//! Large files, streamed: a bundle written in place (appended to, its start patched last,
//! synced before it is renamed into place) and a range of one read as chunks for the
//! engine, never whole in memory.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use bytes::Bytes;
use tokio::io::AsyncReadExt;

use super::{FileStream, OutputFile};

/// What each read hands the engine.
const CHUNK_BYTES: usize = 1 << 20;

pub struct BufferedFile(BufWriter<std::fs::File>);

/// A new file at `path`, which must not exist yet (`O_EXCL`: a name someone planted a
/// link at, in a folder others can write, is never followed).
pub fn create(path: &Path) -> std::io::Result<BufferedFile> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    Ok(BufferedFile(BufWriter::with_capacity(CHUNK_BYTES, file)))
}

impl Write for BufferedFile {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Seek for BufferedFile {
    fn seek(&mut self, position: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(position)
    }
}

impl OutputFile for BufferedFile {
    fn sync(&mut self) -> std::io::Result<()> {
        self.0.flush()?;
        self.0.get_ref().sync_all()
    }
}

/// `length` bytes of `path` from `offset`, read 1 MiB at a time on tokio's blocking pool.
pub fn stream(path: &Path, offset: u64, length: u64) -> std::io::Result<FileStream> {
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let reader = tokio::fs::File::from_std(file).take(length);
    Ok(Box::pin(futures_util::stream::try_unfold(
        reader,
        |mut reader| async move {
            let mut buffer = vec![0; CHUNK_BYTES];
            let mut filled = 0;
            // Whole chunks (tokio hands out smaller reads), so the engine gets few.
            while filled < CHUNK_BYTES {
                let read = reader.read(&mut buffer[filled..]).await?;
                if read == 0 {
                    break;
                }
                filled += read;
            }
            if filled == 0 {
                return Ok(None);
            }
            buffer.truncate(filled);
            Ok(Some((Bytes::from(buffer), reader)))
        },
    )))
}
