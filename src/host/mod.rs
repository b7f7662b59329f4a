//! Facts about this machine, read in one place: who we run as, and (later) GPUs, drivers,
//! the NVIDIA toolkit and free ports. Nothing here talks to Docker.

/// The real uid and gid of this process, from /proc (no libc call needed).
pub fn current_ids() -> Option<(u32, u32)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u32> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("Uid:")?, field("Gid:")?))
}

/// Whether an executable is on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|folder| {
            let candidate = folder.join(program);
            candidate.is_file()
                && std::fs::metadata(&candidate)
                    .map(|meta| {
                        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0
                    })
                    .unwrap_or(false)
        })
    })
}

/// Mount points at or below `folder`, deepest first (from /proc/self/mounts).
pub fn mounts_below(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return Vec::new();
    };
    let mut found: Vec<std::path::PathBuf> = mounts
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|target| std::path::PathBuf::from(target.replace("\\040", " ")))
        .filter(|target| target.starts_with(folder))
        .collect();
    found.sort_by_key(|path| std::cmp::Reverse(path.components().count()));
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_and_path_lookups_work_here() {
        assert!(super::current_ids().is_some());
        assert!(super::on_path("sh"));
        assert!(!super::on_path("tfimg-no-such-program"));
    }
}
