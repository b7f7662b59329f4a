use super::*;

#[test]
fn sources_resolve_and_destinations_default_under_the_workdir() {
    let cwd = Path::new("/home/ana/project");
    let mount = parse("./notebooks", cwd, "/tf").unwrap();
    assert_eq!(mount.source, PathBuf::from("/home/ana/project/notebooks"));
    assert_eq!(mount.target, "/tf/notebooks");
    assert!(!mount.read_only);
    let mount = parse("../data:/data:ro", cwd, "/tf").unwrap();
    assert_eq!(mount.source, PathBuf::from("/home/ana/data"));
    assert_eq!((mount.target.as_str(), mount.read_only), ("/data", true));
    let mount = parse("/srv/x:ro", cwd, "/tf").unwrap();
    assert_eq!((mount.target.as_str(), mount.read_only), ("/tf/x", true));
    for bad in ["", "a:b:c:d", "./x:relative", "./x:/a/../b"] {
        assert!(parse(bad, cwd, "/tf").is_err(), "{bad}");
    }
    let message = |text: &str| parse(text, cwd, "/tf").unwrap_err().message;
    assert_eq!(
        message("./a:/x:bogus"),
        "`--mount ./a:/x:bogus`: `bogus` is not a mount option (`ro` or `rw`)"
    );
    for extra in ["./a:/x:rw:extra", "./a:b:/x"] {
        assert_eq!(
            message(extra),
            format!("`--mount {extra}`: too many `:` parts")
        );
    }
    assert_eq!(
        message("./a:"),
        "`--mount ./a:`: the destination after `:` is empty"
    );
    // Found by `just fuzz`: a newline in the value broke the one-line error.
    let error = parse("a\nb:c", cwd, "/tf").unwrap_err();
    assert_eq!(
        error.message,
        "`--mount a\\nb:c`: the destination `c` must be an absolute path inside the container"
    );
}

#[test]
fn system_folders_are_no_destinations() {
    let cwd = Path::new("/home/ana/project");
    let error = parse("./a:/usr", cwd, "/tf").unwrap_err();
    assert_eq!(
        error.message,
        "`--mount ./a:/usr`: the destination `/usr` is a system folder of the image"
    );
    assert_eq!(
            error.hint,
            "mount under the workdir (the default) or a folder of its own, such as `--mount ./data:/data`"
        );
    assert_eq!(
        parse("./a:/", cwd, "/tf").unwrap_err().message,
        "`--mount ./a:/`: the destination `/` is a system folder of the image"
    );
    for system in [
        "//",
        "/bin",
        "/sbin/",
        "/lib",
        "/lib64",
        "/etc",
        "/./etc",
        "/proc",
        "/proc/1",
        "/sys/fs",
        "/dev/shm",
        "/opt/venv",
        "/opt/tfimg/",
        "//usr",
    ] {
        assert!(is_system_folder(system), "{system}");
    }
    for own in [
        "/data",
        "/tf/x",
        "/usr/local/share/x",
        "/etc/ssl/certs",
        "/opt",
        "/opt/data",
        "/library",
        "/home/tf",
    ] {
        assert!(!is_system_folder(own), "{own}");
        assert!(parse(&format!("./a:{own}"), cwd, "/tf").is_ok(), "{own}");
    }
}

#[test]
fn mounts_above_the_home_or_the_workdir_are_refused() {
    let cwd = Path::new("/home/ana/project");
    let check = |text: &str, workdir: &str| {
        let mount = parse(text, cwd, workdir).unwrap();
        check_not_above(&mount, text, "/home/tf", workdir)
    };
    let error = check("./proj:/mnt", "/mnt/tf").unwrap_err();
    assert_eq!(
        error.message,
        "`--mount ./proj:/mnt`: the destination `/mnt` would hide the image's workdir `/mnt/tf`"
    );
    assert_eq!(
        error.hint,
        "mount at `/mnt/tf` itself or beside it, such as `--mount ./proj:/data`"
    );
    assert_eq!(
            check("./x:/home/", "/tf").unwrap_err().message,
            "`--mount ./x:/home/`: the destination `/home` would hide the image's home folder `/home/tf`"
        );
    assert!(check("./x:/data/deep/w", "/data/deep/w/x").is_err());
    for fine in [
        "./x:/mnt/tf",
        "./x:/home/tf",
        "./x:/home/tf/data",
        "./x:/mnt/t",
        "./x",
        "./x:/tf",
    ] {
        assert!(check(fine, "/mnt/tf").is_ok(), "{fine}");
    }
}
