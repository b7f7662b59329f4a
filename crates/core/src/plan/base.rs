//! Which root filesystem `tfimg base bootstrap` makes for an image reference: the
//! distribution, its suite, the default mirror, and whether it is a `-slim` one. Pure.

use crate::input::InputError;

/// What to debootstrap for an image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapTarget {
    pub reference: String,
    pub distribution: &'static str,
    pub suite: &'static str,
    pub default_mirror: &'static str,
    /// `-slim` tags drop documentation, man pages and locales, as Docker's do.
    pub slim: bool,
}

const DEBIAN_SUITES: &[(&str, &str)] = &[
    ("buster", "buster"),
    ("10", "buster"),
    ("bullseye", "bullseye"),
    ("11", "bullseye"),
    ("bookworm", "bookworm"),
    ("12", "bookworm"),
    ("trixie", "trixie"),
    ("13", "trixie"),
];

const UBUNTU_SUITES: &[(&str, &str)] = &[
    ("20.04", "focal"),
    ("focal", "focal"),
    ("22.04", "jammy"),
    ("jammy", "jammy"),
    ("24.04", "noble"),
    ("noble", "noble"),
];

impl BootstrapTarget {
    /// `debian:bullseye-slim`, `debian:11`, `docker.io/library/debian:bookworm`,
    /// `ubuntu:22.04`, ...
    pub fn parse(reference: &str) -> Result<BootstrapTarget, InputError> {
        let unknown = || {
            InputError::new(
                format!("tfimg cannot bootstrap `{reference}`"),
                "bootstrap takes Debian (`debian:bullseye-slim`, `debian:bookworm`, `debian:11`) or Ubuntu (`ubuntu:20.04`, `ubuntu:22.04`, `ubuntu:24.04`) references",
            )
        };
        let (repository, tag) = reference.rsplit_once(':').ok_or_else(unknown)?;
        // The last path segment names the distribution, so `team/debian:11` works too.
        let name = repository.rsplit('/').next().unwrap_or(repository);
        let (tag_base, slim) = match tag.strip_suffix("-slim") {
            Some(base) => (base, true),
            None => (tag, false),
        };
        let (distribution, table, mirror): (&'static str, &[(&str, &'static str)], &'static str) =
            match name {
                "debian" => ("debian", DEBIAN_SUITES, "http://deb.debian.org/debian"),
                "ubuntu" => ("ubuntu", UBUNTU_SUITES, "http://archive.ubuntu.com/ubuntu"),
                _ => return Err(unknown()),
            };
        // `11.6` and `11` both mean bullseye.
        let release = if distribution == "debian" {
            tag_base.split('.').next().unwrap_or(tag_base)
        } else {
            tag_base
        };
        let suite = table
            .iter()
            .find(|(name, _)| *name == release)
            .map(|(_, suite)| *suite)
            .ok_or_else(unknown)?;
        Ok(BootstrapTarget {
            reference: reference.to_string(),
            distribution,
            suite,
            default_mirror: mirror,
            slim,
        })
    }
}

#[cfg(test)]
mod tests;
