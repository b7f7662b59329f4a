use super::*;

#[test]
fn workdirs_under_system_folders_are_refused() {
    let verdict = |path: &str| {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        system_folder(&parts)
    };
    for system in [
        "/opt/venv/bin",
        "/opt/tfimg",
        "/lib/x86_64-linux-gnu",
        "/proc/self",
        "/dev/shm",
        "/home/tf/.ssh",
        "/usr/local/bin",
        "/etc",
        "/var/lib/x",
        "/run/user",
        "/root/work",
        "/home",
        "/opt",
        "/tmp",
    ] {
        assert!(verdict(system).is_some(), "{system}");
    }
    for own in [
        "/tf",
        "/workspace",
        "/home/tf",
        "/home/tf/work",
        "/opt/project",
        "/mnt/tf",
        "/srv/lab",
        "/tmp/work",
        "/data/x",
    ] {
        assert_eq!(verdict(own), None, "{own}");
    }
}
