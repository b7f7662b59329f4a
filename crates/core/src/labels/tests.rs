use super::*;

#[test]
fn sync_destinations_round_trip_in_order() {
    let text = encode_syncs(["/tf/code", "/data"]);
    assert_eq!(text, "/tf/code,/data");
    assert_eq!(decode_syncs(&text), ["/tf/code", "/data"]);
    assert!(decode_syncs("").is_empty());
}

#[test]
fn ports_round_trip_and_bad_entries_are_skipped() {
    let ports = vec![
        PublishedPort {
            name: "jupyter".into(),
            host_ip: "127.0.0.1".into(),
            host: 8890,
            container: 8888,
        },
        PublishedPort {
            name: "tensorboard".into(),
            host_ip: "0.0.0.0".into(),
            host: 6006,
            container: 6006,
        },
    ];
    let text = encode_ports(&ports);
    assert_eq!(
        text,
        "jupyter=127.0.0.1:8890->8888,tensorboard=0.0.0.0:6006->6006"
    );
    assert_eq!(decode_ports(&text), ports);
    assert_eq!(decode_ports("x=1.2.3.4:99999->1,y,z=a:x->2"), Vec::new());
}

#[test]
fn tokens_and_image_facts_are_read_back() {
    let env = vec!["A=1".to_string(), format!("{JUPYTER_TOKEN_VARIABLE}=abc")];
    assert_eq!(jupyter_token(&env).as_deref(), Some("abc"));
    assert_eq!(jupyter_token(&env[..1]), None);
    let labels: HashMap<String, String> = image_labels(
        "lab",
        "2.9.3",
        "3.9",
        "jupyter",
        "tf",
        Some(("11.8", "8.6")),
        Some(6006),
    )
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect();
    let decoded = ImageLabels::decode(&labels);
    assert_eq!(decoded.spec.as_deref(), Some("lab"));
    assert!(decoded.gpu && decoded.tfimg);
    assert_eq!(decoded.tensorboard, Some(6006));
    assert_eq!(ImageLabels::decode(&HashMap::new()), ImageLabels::default());
}
