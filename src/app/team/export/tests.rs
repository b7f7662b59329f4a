//! Unit tests of the exports' writes on the fakes: each file's mode, and the gateway's
//! folder given away only when another user runs nginx.
use super::*;
use crate::app::session::Session;
use crate::app::testing::{prepare_and_start, request};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;

fn gateway(host: &FakeHost, owner: (u32, u32)) -> ComposeGateway {
    let plan = prepare_and_start(
        Session::quiet(&FakeEngine::new(), host),
        request("cpu-headless"),
    )
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

fn team_and_specs() -> (Team, BTreeMap<String, ResolvedSpec>, TeamImages) {
    let text = "team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: ana\n  - name: bo\n";
    let team = crate::team::parse(text, "team.yaml", PathBuf::from("/project")).unwrap();
    let catalog = crate::spec::Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, "cpu-jupyter").unwrap();
    let images = TeamImages {
        specs: BTreeMap::from([(
            "cpu-jupyter".to_string(),
            "tfimg/cpu-jupyter:2.9.3".to_string(),
        )]),
        gateway: None,
        ..Default::default()
    };
    (
        team,
        BTreeMap::from([("cpu-jupyter".to_string(), resolved)]),
        images,
    )
}

#[test]
fn compose_writes_the_secrets_0600_and_the_file_when_asked() {
    let host = FakeHost::new();
    let (team, specs, images) = team_and_specs();
    let ui = crate::output::ui::Recorded::default();
    let output = ComposeOutput {
        folder: Path::new("/out"),
        file_name: Some(Path::new("compose.yaml")),
        source: "team.yaml",
    };
    let export = compose(&host, &team, &specs, &images, output, &ui).unwrap();
    assert_eq!(export.env_files, 2);
    assert_eq!(export.plans.len(), 2);
    let exported = host.exported.borrow();
    let modes: Vec<(String, u32)> = exported
        .iter()
        .map(|(path, (mode, _))| (path.display().to_string(), *mode))
        .collect();
    assert!(
        modes.contains(&("/out/compose.yaml".to_string(), 0o666)),
        "{modes:?}"
    );
    assert_eq!(
        modes
            .iter()
            .filter(|(path, mode)| path.ends_with(".env") && *mode == 0o600)
            .count(),
        2,
        "{modes:?}"
    );
    // What Compose starts is reached through the export's own tokens.
    let rows = reach_rows(&export.plans);
    assert_eq!(rows.len(), 2);
    assert!(rows[0][1].contains("token="), "{rows:?}");
}

#[test]
fn k8s_manifests_are_written_for_the_owner_only_and_the_tfjobs_apart() {
    let host = FakeHost::new();
    let (team, specs, images) = team_and_specs();
    let choices = K8sChoices {
        uid: 1000,
        gid: 1000,
        registry: None,
        tfjob: false,
        volume_size: "10Gi".to_string(),
    };
    let ui = crate::output::ui::Recorded::default();
    let mut exported = k8s(&host, &team, &specs, &images, &choices, &ui).unwrap();
    let manifests = exported.manifests.clone().unwrap();
    assert!(manifests.contains("kind: Secret"), "{manifests}");
    assert!(exported.tfjobs.is_none());
    assert!(exported.hub_values.is_none(), "no hub, no Helm values");
    exported.tfjobs = Some("kind: TFJob".to_string());
    let written = write_k8s(&host, Path::new("/out"), "lab", &exported).unwrap();
    assert_eq!(
        written
            .iter()
            .map(|(path, _)| path.clone())
            .collect::<Vec<_>>(),
        [
            PathBuf::from("/out/lab.yaml"),
            PathBuf::from("/out/lab.tfjob.yaml")
        ]
    );
    let exported = host.exported.borrow();
    assert_eq!(exported[Path::new("/out/lab.yaml")].0, 0o600);
    assert_eq!(exported[Path::new("/out/lab.tfjob.yaml")].0, 0o666);
}
