use super::*;

#[test]
fn volumes_are_named_and_mounted_read_write_unless_ro() {
    let volume = parse("data:/tf/data/").unwrap();
    assert_eq!(
        (
            volume.name.as_str(),
            volume.target.as_str(),
            volume.read_only
        ),
        ("data", "/tf/data", false)
    );
    assert_eq!(volume.labels["io.tfimg.volume"], "data");
    assert!(parse("my.data-1:/data:ro").unwrap().read_only);
    assert!(!parse("my_data:/data:rw").unwrap().read_only);
}

#[test]
fn paths_bad_names_and_bad_destinations_are_refused_by_flag() {
    let message = |text: &str| parse(text).unwrap_err().message;
    let path = parse("./data:/d").unwrap_err();
    assert_eq!(
        path.message,
        "`--volume ./data:/d`: `./data` is a path; volumes are named (`--volume data:/tf/data`)"
    );
    assert_eq!(
        path.hint,
        "copy a local folder in with `--sync ./data`, or name a volume Docker keeps for you"
    );
    assert!(message("/srv/data:/d").contains("is a path"));
    assert!(message("~/data:/d").contains("is a path"));
    assert_eq!(
        message("d:/x"),
        "`--volume d:/x`: `d` is not a valid volume name"
    );
    assert_eq!(
        message("a b:/x"),
        "`--volume a b:/x`: `a b` is not a valid volume name"
    );
    assert_eq!(
        message("data"),
        "`--volume data`: the destination is missing"
    );
    assert_eq!(
        message("data:/x:bogus"),
        "`--volume data:/x:bogus`: `bogus` is not a volume option (`ro` or `rw`)"
    );
    assert_eq!(
        message("data:/x:ro:more"),
        "`--volume data:/x:ro:more`: too many `:` parts"
    );
    assert_eq!(
            message("data:relative"),
            "`--volume data:relative`: the destination `relative` must be an absolute path inside the container"
        );
    assert_eq!(
        message("data:/usr"),
        "`--volume data:/usr`: the destination `/usr` is a system folder of the image"
    );
    assert_eq!(message(":/x"), "`--volume :/x`: the volume name is empty");
    assert_eq!(
        message("data:"),
        "`--volume data:`: the destination after `:` is empty"
    );
}
