use super::testing::{chosen, request};
use super::*;

#[test]
fn access_is_the_first_service_and_the_tensorboard() {
    let endpoints = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, address)| (name.to_string(), address.to_string()))
            .collect()
    };
    let ssh = endpoints(&[("tensorboard", "http://t/"), ("ssh", "ssh -p 22 tf@h")]);
    assert_eq!(access(&ssh), (Some("ssh -p 22 tf@h"), Some("http://t/")));
    assert_eq!(access(&endpoints(&[])), (None, None));
}

#[test]
fn a_jupyter_launch_maps_the_user_keeps_few_capabilities_and_labels_its_url() {
    let plan = launch(&request(), &chosen());
    assert_eq!(
        plan.env,
        [
            "A=1".to_string(),
            format!("{}=2345", labels::GID_VARIABLE),
            format!("{}=t0k3n", labels::JUPYTER_TOKEN_VARIABLE),
            format!("{}=1234", labels::UID_VARIABLE),
        ]
    );
    assert_eq!(plan.user.as_deref(), Some("root"));
    assert_eq!(
        plan.cap_drop,
        [
            "AUDIT_WRITE",
            "FSETID",
            "KILL",
            "MKNOD",
            "NET_BIND_SERVICE",
            "NET_RAW",
            "SETFCAP",
            "SETPCAP",
            "SYS_CHROOT"
        ]
    );
    assert_eq!(plan.security_opt, ["no-new-privileges"]);
    let url = "http://127.0.0.1:8890/lab?token=t0k3n";
    assert_eq!(plan.endpoints, [("jupyter".to_string(), url.to_string())]);
    assert_eq!(
        plan.labels[&labels::url_label("jupyter")],
        "http://127.0.0.1:8890/lab",
        "no token in labels"
    );
    assert_eq!(
        with_token(&plan.labels[&labels::url_label("jupyter")], "t0k3n"),
        url
    );
    assert_eq!(plan.labels[labels::PORTS], "jupyter=127.0.0.1:8890->8888");
    assert_eq!(plan.labels[labels::GPUS], "none");
    assert_eq!(plan.labels[labels::UID], "1234:2345");
    assert_eq!(plan.shm_size, 2147483648);
}

#[test]
fn root_s_ids_keep_only_what_empties_the_bounding_set() {
    // Plain root's default: the entrypoint takes uid 0, so it also keeps SETPCAP to empty
    // the bounding set before it hands over (CapEff 0 after the exec).
    let mut root_ids = request();
    root_ids.ids = Some((0, 0));
    let plan = launch(&root_ids, &chosen());
    assert_eq!(plan.user.as_deref(), Some("root"));
    assert_eq!(
        plan.cap_drop,
        [
            "AUDIT_WRITE",
            "FSETID",
            "KILL",
            "MKNOD",
            "NET_BIND_SERVICE",
            "NET_RAW",
            "SETFCAP",
            "SYS_CHROOT"
        ]
    );
    assert_eq!(plan.security_opt, ["no-new-privileges"]);
    assert!(plan.env.contains(&format!("{}=0", labels::UID_VARIABLE)));
}

#[test]
fn a_command_replaces_the_service_and_ssh_lines_are_exact() {
    let mut with_command = request();
    with_command.command = vec!["python".into()];
    assert!(launch(&with_command, &chosen()).endpoints.is_empty());
    let mut ssh = request();
    ssh.target.service = Service::Ssh;
    let mut ssh_chosen = chosen();
    ssh_chosen.jupyter_token = None;
    ssh_chosen.ports[0].name = "ssh".into();
    ssh_chosen.ssh_identity = Some("/home/a/.ssh/id_ed25519".into());
    ssh_chosen.ssh_known_hosts = Some("/home/a/.local/share/tfimg/known_hosts".into());
    assert_eq!(
            launch(&ssh, &ssh_chosen).endpoints[0].1,
            "ssh -p 8890 -i /home/a/.ssh/id_ed25519 -o UserKnownHostsFile=/home/a/.local/share/tfimg/known_hosts tf@127.0.0.1"
        );
}

#[test]
fn other_images_start_as_the_host_user_and_root_opt_out_logs_in_as_root() {
    let mut foreign = request();
    foreign.target.tfimg_image = false;
    let foreign_chosen = Chosen {
        jupyter_token: None,
        ..chosen()
    };
    let plan = launch(&foreign, &foreign_chosen);
    assert_eq!(plan.user.as_deref(), Some("1234:2345"));
    assert_eq!(plan.cap_drop, ["ALL"]);
    assert!(!plan
        .env
        .iter()
        .any(|entry| entry.starts_with(&format!("{}=", labels::UID_VARIABLE))));
    let mut root = request();
    root.target.service = Service::Ssh;
    root.ids = None;
    let mut root_chosen = chosen();
    root_chosen.ports[0].name = "ssh".into();
    let plan = launch(&root, &root_chosen);
    assert!(plan.endpoints[0].1.ends_with(" root@127.0.0.1"));
    assert_eq!(plan.user.as_deref(), Some("root"));
    assert!(plan.cap_drop.is_empty());
}

#[test]
fn out_of_memory_names_the_limit_and_the_setting_that_doubles_it() {
    let (why, fix) = out_of_memory(Some(64 << 20), "`--memory VALUE`");
    assert_eq!(
        why,
        "the kernel killed it for using more than its memory limit (64 MiB)"
    );
    assert_eq!(
        fix,
        "raise the limit (`--memory 128m`), or have the job use less (a smaller batch)"
    );
    let (why, fix) = out_of_memory(Some(8 << 30), "`memory: VALUE` in the sweep file");
    assert_eq!(
        why,
        "the kernel killed it for using more than its memory limit (8 GiB)"
    );
    assert_eq!(fix, "raise the limit (`memory: 16g` in the sweep file), or have the job use less (a smaller batch)");
    let (why, _) = out_of_memory(Some(3 << 29), "`--memory VALUE`");
    assert!(why.ends_with("(1.5 GiB)"), "{why}");
    let (why, fix) = out_of_memory(None, "`--memory VALUE`");
    assert_eq!(why, "the kernel killed it for memory: the host ran out");
    assert!(fix.contains("`--memory 8g`"), "{fix}");
}
