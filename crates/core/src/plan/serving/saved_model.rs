//! Which TensorFlow wrote a SavedModel, and which serving line can load it. A SavedModel's
//! `saved_model.pb` records the writer's version in its first meta graph
//! (`meta_graphs[0].meta_info_def.tensorflow_version`, "2.18.0"); TensorFlow loads what
//! its own or an older release wrote, and an older one may lack the newer's ops ("Op type
//! not registered 'DisableCopyOnRead'"). Protobuf's wire format is read with prost (its
//! `encoding` functions for the path to the one small message, its derive for that
//! message), only from the file's head: writers put fields in number order, so the meta
//! graph's `meta_info_def` (field 1) comes before its graph, however large. Pure: bytes in.

use prost::bytes::Buf;
use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
use prost::Message;

/// How much of `saved_model.pb` is read: its `meta_info_def` (the ops the graph uses, then
/// the version) is well within it.
pub const HEAD_BYTES: u64 = 4 << 20;

/// `MetaInfoDef`, the fields read (tensorflow/core/protobuf/meta_graph.proto).
#[derive(Clone, PartialEq, Message)]
struct MetaInfoDef {
    #[prost(string, repeated, tag = "4")]
    tags: Vec<String>,
    #[prost(string, tag = "5")]
    tensorflow_version: String,
}

/// The TensorFlow version that wrote the SavedModel whose `saved_model.pb` begins with
/// `head` ("2.18.0"); `None` when the head does not say (a truncated or foreign file, a
/// writer that left it empty).
pub fn written_by(head: &[u8]) -> Option<String> {
    let mut buf = head;
    // SavedModel: `saved_model_schema_version` = 1, `meta_graphs` = 2 (repeated).
    loop {
        let (tag, wire) = decode_key(&mut buf).ok()?;
        if tag == 2 && wire == WireType::LengthDelimited {
            decode_varint(&mut buf).ok()?;
            break;
        }
        skip_field(wire, tag, &mut buf, DecodeContext::default()).ok()?;
    }
    // Its first MetaGraphDef: `meta_info_def` = 1.
    loop {
        let (tag, wire) = decode_key(&mut buf).ok()?;
        if tag == 1 && wire == WireType::LengthDelimited {
            let length = usize::try_from(decode_varint(&mut buf).ok()?).ok()?;
            let info = MetaInfoDef::decode(buf.chunk().get(..length)?).ok()?;
            let version = info.tensorflow_version.trim().to_string();
            return (!version.is_empty()).then_some(version);
        }
        skip_field(wire, tag, &mut buf, DecodeContext::default()).ok()?;
    }
}

/// `major.minor` of a version ("2.18.0-rc1" → (2, 18)).
pub fn minor_of(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The first of `lines` (their TensorFlow versions, oldest first) that loads what
/// `writer` wrote: the oldest not older than it. `None` when every line is older.
pub fn line_for(writer: (u32, u32), lines: &[(u32, u32)]) -> Option<usize> {
    lines.iter().position(|line| *line >= writer)
}

#[cfg(test)]
mod tests;
