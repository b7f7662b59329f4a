//! Paths as the user wrote them, resolved by reading them: `a/./b/../c` → `a/c`, without
//! touching the file system (a mount source or a `files:` source may not exist yet).

use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` resolved lexically.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
