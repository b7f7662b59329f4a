//! Unit tests of `sync`.
use super::*;
use crate::notice::Notice;

fn parse(text: &str) -> Result<SyncPlan, InputError> {
    Ok(parse_request(text, Path::new("/home/ana/project"))?.at("/tf"))
}

#[test]
fn sources_resolve_and_destinations_default_under_the_workdir() {
    let sync = parse("./code").unwrap();
    assert_eq!(sync.source, PathBuf::from("/home/ana/project/code"));
    assert_eq!(sync.target, "/tf/code");
    assert_eq!((sync.folder().as_str(), sync.name()), ("/tf", "code"));
    assert_eq!(sync.source_text(), "./code");
    let sync = parse("../data/train.csv:/data/").unwrap();
    assert_eq!(sync.source, PathBuf::from("/home/ana/data/train.csv"));
    assert_eq!(
        (sync.target.as_str(), sync.folder().as_str()),
        ("/data", "/")
    );
    assert_eq!(sync.name(), "data");
    assert_eq!(parse(".").unwrap().target, "/tf/project");
}

#[test]
fn bad_values_name_the_flag() {
    let message = |text: &str| parse(text).unwrap_err().message;
    assert_eq!(message(""), "`--sync `: the source is empty");
    assert_eq!(message(":/x"), "`--sync :/x`: the source is empty");
    assert_eq!(message("a:/b:/c"), "`--sync a:/b:/c`: too many `:` parts");
    assert_eq!(
        message("./a:"),
        "`--sync ./a:`: the destination after `:` is empty"
    );
    assert_eq!(
        message("./a:relative"),
        "`--sync ./a:relative`: the destination `relative` must be an absolute path inside the container"
    );
    assert_eq!(
        message("./a:/tf/../etc"),
        "`--sync ./a:/tf/../etc`: the destination `/tf/../etc` must be an absolute path inside the container"
    );
    let system = parse("./a:/etc").unwrap_err();
    assert_eq!(
        system.message,
        "`--sync ./a:/etc`: the destination `/etc` is a system folder of the image"
    );
    assert_eq!(
        system.hint,
        "use the workdir or a folder of its own, such as `--sync ./data:/tf/data`"
    );
    assert_eq!(
        parse_request("/", Path::new("/")).unwrap_err().message,
        "`--sync /`: the source has no name to copy under the workdir; give DST"
    );
    assert_eq!(
        message("a\nb:c"),
        "`--sync a\\nb:c`: the destination `c` must be an absolute path inside the container"
    );
}

#[test]
fn sync_back_needs_a_sync_and_a_foreground_run() {
    assert!(check_sync_back(false, 0, true, true).is_ok());
    assert!(check_sync_back(true, 1, false, false).is_ok());
    assert_eq!(
        check_sync_back(true, 0, false, false).unwrap_err().message,
        "`--sync-back` has nothing to copy back: there is no `--sync`"
    );
    let detached = check_sync_back(true, 1, true, false).unwrap_err();
    assert_eq!(
        detached.message,
        "`--sync-back` needs a foreground run, not `-d`"
    );
    assert_eq!(
        detached.hint,
        "fetch a detached run's files with `tfimg pull-files NAME DST` once it is done"
    );
    assert!(check_sync_back(true, 1, false, true)
        .unwrap_err()
        .message
        .contains("`--no-start`"));
}

#[test]
fn overlapping_destinations_are_refused_unless_both_are_mounts() {
    let place =
        |flag: &str, target: &str, mount: bool| (flag.to_string(), target.to_string(), mount);
    assert!(check_overlaps(&[
        place("--sync ./code", "/tf/code", false),
        place("--volume data:/tf/data", "/tf/data", false),
        place("--mount ./x", "/tf/x", true),
        place("--mount ./y:/tf/x/y", "/tf/x/y", true),
        place("--sync ./codex", "/tf/codex", false),
    ])
    .is_ok());
    let error = check_overlaps(&[
        place("--mount ./data", "/tf/data", true),
        place("--sync ./more:/tf/data/more", "/tf/data/more", false),
    ])
    .unwrap_err();
    assert_eq!(
        error.message,
        "`--mount ./data` and `--sync ./more:/tf/data/more` overlap at `/tf/data/more`"
    );
    assert!(check_overlaps(&[
        place("--volume a:/tf/a", "/tf/a", false),
        place("--volume b:/tf/a", "/tf/a", false),
    ])
    .is_err());
}

#[test]
fn a_folder_of_this_machine_on_a_remote_engine_is_refused_with_what_reaches_it() {
    let error = folder_on_remote("`--mount ./data:/tf/data:ro`", "ssh://gpu");
    assert_eq!(
        error.message,
        "`--mount ./data:/tf/data:ro` names a folder on this machine, but the engine `ssh://gpu` runs on another host"
    );
    assert_eq!(
        error.hint,
        "only copies (`--sync`, a sweep trial's own folder) and volumes (`--volume data:/tf/data`) reach an engine on another host; run tfimg on that host itself to use its folders"
    );
}

#[test]
fn a_missing_folder_names_the_sync() {
    assert_eq!(
        missing_folder(&parse("./code:/opt/x/code").unwrap()).message,
        "`--sync ./code:/opt/x/code`: the folder `/opt/x` does not exist in the image"
    );
}

#[test]
fn a_tcp_engine_off_this_machine_gets_a_note_about_mounts() {
    for local in [
        "unix:///var/run/docker.sock",
        "tcp://127.0.0.1:2375",
        "tcp://localhost:2376",
        "tcp://[::1]:2375",
        "ssh://gpu-box",
    ] {
        assert_eq!(mounts_on_tcp_note(local), None, "{local}");
    }
    for elsewhere in [
        "tcp://10.0.0.5:2376",
        "tcp://gpu-box:2375",
        "tcp://[fd00::5]:2375",
    ] {
        let note = mounts_on_tcp_note(elsewhere).expect(elsewhere);
        let Notice::Note(text) = &note else { panic!("{note:?} is no note") };
        assert!(
            text.starts_with(&format!("the engine `{elsewhere}` may run on another host")),
            "{text}"
        );
    }
}
