use super::*;

#[test]
fn tensorflow_serving_s_file_reads_as_written_and_what_it_leaves_out_takes_its_defaults() {
    let text = "# TensorFlow Serving's batching guide's example\n\
                max_batch_size { value: 32 }\n\
                batch_timeout_micros { value: 2000 }\n\
                max_enqueued_batches { value: 100 }\n\
                num_batch_threads { value: 4 }\n\
                thread_pool_name { value: \"pool\" }\n\
                allowed_batch_sizes: 8\n\
                allowed_batch_sizes: 32\n\
                pad_variable_length_inputs: false\n";
    let batching = read("batching.config", text).unwrap();
    assert_eq!(
        batching,
        Batching {
            max_batch_size: 32,
            batch_timeout_micros: 2000,
            max_enqueued_batches: 100,
            num_batch_threads: Some(4),
            allowed_batch_sizes: vec![8, 32],
        }
    );
    let json: serde_json::Value = serde_json::from_str(&batching.env_value()).unwrap();
    assert_eq!(json["allowed_batch_sizes"], serde_json::json!([8, 32]));
    assert_eq!(json["batch_timeout_micros"], 2000);
    let empty = read("b", "").unwrap();
    assert_eq!(empty, Batching::default());
    assert_eq!(
        (empty.max_batch_size, empty.max_enqueued_batches),
        (1000, 10)
    );
    let json: serde_json::Value = serde_json::from_str(&empty.env_value()).unwrap();
    assert!(json["num_batch_threads"].is_null());
    let list = read(
        "b",
        "max_batch_size { value: 8 } allowed_batch_sizes: [2, 4, 8]",
    )
    .unwrap();
    assert_eq!(list.allowed_batch_sizes, vec![2, 4, 8]);
}

fn refused(text: &str) -> (usize, usize, String, String) {
    let error = read("batching.config", text).unwrap_err();
    let at = error.location.expect("a location");
    assert_eq!(at.file, "batching.config");
    (at.line, at.column, error.message, error.hint)
}

#[test]
fn each_problem_is_named_at_its_line_and_column_with_tensorflow_serving_s_words_where_it_has_them()
{
    let (line, column, message, _) =
        refused("max_batch_size { value: 8 }\nallowed_batch_sizes: 4\nallowed_batch_sizes: 4\n");
    assert_eq!((line, column), (3, 1));
    assert_eq!(
        message,
        "allowed_batch_sizes entries must be monotonically increasing"
    );
    let (line, _, message, hint) = refused("max_batch_size { value: 8 }\nallowed_batch_sizes: 4\n");
    assert_eq!(line, 2);
    assert_eq!(
        message,
        "the last of allowed_batch_sizes, 4, is not max_batch_size, 8 (TensorFlow Serving: Last entry in allowed_batch_sizes must match max_batch_size; last entry was 4; expected 8)"
    );
    assert!(hint.contains("line 1"), "{hint}");
    let (_, _, _, hint) = refused("allowed_batch_sizes: 4\n");
    assert!(hint.contains("default"), "{hint}");
    let (line, column, message, _) = refused("\n  max_batch_size { value: 0 }");
    assert_eq!((line, column), (2, 20));
    assert_eq!(message, "`max_batch_size` takes a whole number from 1");
    assert_eq!(
        refused("batch_timeout_micros { value: -1 }").2,
        "`batch_timeout_micros` takes a whole number from 0"
    );
    assert!(read("b", "batch_timeout_micros { value: 0 }").is_ok());
    let (_, _, message, hint) = refused("max_batch_size: 32");
    assert!(message.contains("is a message (a wrapper)"), "{message}");
    assert!(hint.contains("max_batch_size { value: 1 }"), "{hint}");
    assert_eq!(
        refused("max_batch_size { }").2,
        "`max_batch_size` has no `value`"
    );
    assert_eq!(
        refused("max_batch_size { valu: 3 }").2,
        "`valu` is not a field of `max_batch_size`"
    );
    assert_eq!(
        refused("max_batch_size { value: 3 value: 4 }").2,
        "`max_batch_size` has one `value`"
    );
    assert_eq!(
        refused("num_batch_threads { value: 2 }\nnum_batch_threads { value: 3 }").0,
        2
    );
    let (_, _, message, hint) = refused("max_batch_sise { value: 3 }");
    assert_eq!(message, "`max_batch_sise` is not a batching parameter");
    assert!(hint.contains("max_batch_size"), "{hint}");
    assert!(refused("enable_large_batch_splitting { value: true }")
        .2
        .contains("never split"));
    assert!(refused("pad_variable_length_inputs: true")
        .2
        .contains("batches of their own"));
    assert_eq!(
        refused("allowed_batch_sizes: \"8\"").2,
        "`allowed_batch_sizes: 8` is not a whole number from 1"
    );
    assert!(refused("thread_pool_name { value: 3 }")
        .2
        .contains("takes a string"));
    let (line, column, _, hint) = refused("max_batch_size { value: 3 ");
    assert_eq!((line, column), (1, 16), "where the unclosed message opens");
    assert_eq!(hint, HINT);
}
