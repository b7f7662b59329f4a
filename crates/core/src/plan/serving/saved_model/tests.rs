use super::*;

/// The messages a SavedModel is made of, as TensorFlow writes them (fields in number
/// order), with a graph of `graph_bytes` after the meta info.
#[derive(Clone, PartialEq, Message)]
struct SavedModel {
    #[prost(int64, tag = "1")]
    saved_model_schema_version: i64,
    #[prost(message, repeated, tag = "2")]
    meta_graphs: Vec<MetaGraphDef>,
}

#[derive(Clone, PartialEq, Message)]
struct MetaGraphDef {
    #[prost(message, optional, tag = "1")]
    meta_info_def: Option<FullMetaInfoDef>,
    #[prost(bytes = "vec", tag = "2")]
    graph_def: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct FullMetaInfoDef {
    #[prost(string, tag = "1")]
    meta_graph_version: String,
    #[prost(bytes = "vec", tag = "2")]
    stripped_op_list: Vec<u8>,
    #[prost(string, repeated, tag = "4")]
    tags: Vec<String>,
    #[prost(string, tag = "5")]
    tensorflow_version: String,
    #[prost(string, tag = "6")]
    tensorflow_git_version: String,
}

fn saved_model(version: &str, graph_bytes: usize) -> Vec<u8> {
    SavedModel {
        saved_model_schema_version: 1,
        meta_graphs: vec![MetaGraphDef {
            meta_info_def: Some(FullMetaInfoDef {
                meta_graph_version: String::new(),
                stripped_op_list: vec![7; 40_000],
                tags: vec!["serve".to_string()],
                tensorflow_version: version.to_string(),
                tensorflow_git_version: "v2.18.0-rc2-4-g6550e4bd802".to_string(),
            }),
            graph_def: vec![1; graph_bytes],
        }],
    }
    .encode_to_vec()
}

#[test]
fn the_writer_s_version_is_read_from_the_file_s_head_whatever_the_graph_s_size() {
    let file = saved_model("2.18.0", 10 << 20);
    assert_eq!(written_by(&file).as_deref(), Some("2.18.0"));
    assert_eq!(
        written_by(&file[..HEAD_BYTES as usize]).as_deref(),
        Some("2.18.0")
    );
    assert_eq!(
        written_by(&saved_model("1.15.0", 10)).as_deref(),
        Some("1.15.0")
    );
}

#[test]
fn a_file_that_does_not_say_gives_no_version_and_never_panics() {
    assert_eq!(written_by(&saved_model("", 10)), None);
    assert_eq!(written_by(b""), None);
    assert_eq!(written_by(b"model_config_list {}"), None);
    let file = saved_model("2.9.3", 10);
    for cut in 0..200 {
        let _ = written_by(&file[..cut]);
    }
    assert_eq!(written_by(&file[..100]), None, "the meta info is cut short");
    // A length that runs past the file, and one past any size.
    assert_eq!(
        written_by(&[0x12, 0x05, 0x0a, 0xff, 0xff, 0xff, 0x0f]),
        None
    );
    assert_eq!(
        written_by(&[0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
        None
    );
}

#[test]
fn the_oldest_line_not_older_than_the_writer_loads_it() {
    assert_eq!(minor_of("2.18.0"), Some((2, 18)));
    assert_eq!(minor_of("2.16.0-rc1"), Some((2, 16)));
    assert_eq!(minor_of("1.15"), Some((1, 15)));
    assert_eq!(minor_of("unknown"), None);
    let lines = [(2, 9), (2, 18)];
    assert_eq!(line_for((1, 15), &lines), Some(0));
    assert_eq!(line_for((2, 9), &lines), Some(0));
    assert_eq!(line_for((2, 10), &lines), Some(1));
    assert_eq!(line_for((2, 18), &lines), Some(1));
    assert_eq!(line_for((2, 19), &lines), None);
}
