//! Unit tests of the exports' writes on the fakes: each file's mode, and the gateway's
//! folder given away only when another user runs nginx.
use super::*;
use crate::app::testing::{prepare_and_start, request};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;

fn gateway(host: &FakeHost, owner: (u32, u32)) -> ComposeGateway {
    let plan = prepare_and_start(&FakeEngine::new(), host, request("cpu-headless"))
        .unwrap()
        .plan;
    ComposeGateway {
        plan,
        folder: PathBuf::from("/out/lab-gateway"),
        files: vec![
            ("nginx.conf", b"events {}".to_vec(), false),
            ("gateway.key", b"KEY".to_vec(), true),
        ],
        owner,
    }
}

#[test]
fn export_files_keep_their_modes() {
    let host = FakeHost::new();
    let files = [
        (PathBuf::from("lab.ana.env"), b"TOKEN=1".as_slice(), 0o600),
        (
            PathBuf::from("compose.yaml"),
            b"services: {}".as_slice(),
            0o666,
        ),
    ];
    write(&host, Path::new("/out"), &files).unwrap();
    let exported = host.exported.borrow();
    assert_eq!(exported[Path::new("/out/lab.ana.env")], (0o600, None));
    assert_eq!(exported[Path::new("/out/compose.yaml")], (0o666, None));
    assert_eq!(
        host.files.borrow()[Path::new("/out/lab.ana.env")],
        b"TOKEN=1"
    );
}

#[test]
fn the_gateway_folder_is_private_and_given_away_only_to_another_user() {
    // This user runs nginx: nothing is given away.
    let host = FakeHost::new();
    write_gateway(&host, &gateway(&host, (4321, 4322))).unwrap();
    let exported = host.exported.borrow();
    assert_eq!(exported[Path::new("/out/lab-gateway")], (0o700, None));
    assert_eq!(
        exported[Path::new("/out/lab-gateway/nginx.conf")],
        (0o644, None)
    );
    assert_eq!(
        exported[Path::new("/out/lab-gateway/gateway.key")],
        (0o600, None)
    );

    // Root exports for the image's user: the folder and its files are that user's.
    let host = FakeHost::new();
    write_gateway(&host, &gateway(&host, (101, 101))).unwrap();
    let exported = host.exported.borrow();
    assert!(
        exported
            .values()
            .all(|(_, owner)| *owner == Some((101, 101))),
        "{exported:?}"
    );
}

#[test]
fn a_failed_step_names_its_path() {
    let failure = ExportError {
        step: ExportStep::GiveAway(101, 101),
        path: PathBuf::from("/out/lab-gateway"),
        error: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
    };
    let error = failed(failure);
    assert!(
        format!("{error:#}").starts_with("cannot give `/out/lab-gateway` to 101:101: "),
        "{error:#}"
    );
}
