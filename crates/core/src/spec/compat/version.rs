//! Versions as the compatibility table writes them: dotted numbers compared part by part.
//! Pure: no I/O.

use std::cmp::Ordering;
use std::fmt;

/// A dotted numeric version (`2.9`, `2.9.3`, `460.32.03`). Missing trailing parts compare
/// as zero, so `11.2` == `11.2.0`.
#[derive(Debug, Clone)]
pub struct Version {
    parts: Vec<u32>,
    text: String,
}

impl Version {
    /// Parses `1`, `1.2`, `1.2.3` (up to four numeric parts); `None` on anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let parts = text
            .split('.')
            .map(|part| {
                if part.is_empty() || part.len() > 9 || !part.bytes().all(|b| b.is_ascii_digit()) {
                    None
                } else {
                    part.parse::<u32>().ok()
                }
            })
            .collect::<Option<Vec<u32>>>()?;
        if parts.is_empty() || parts.len() > 4 {
            return None;
        }
        Some(Version {
            parts,
            text: text.to_string(),
        })
    }

    pub fn major(&self) -> u32 {
        self.parts[0]
    }

    pub fn minor(&self) -> Option<u32> {
        self.parts.get(1).copied()
    }

    pub fn patch(&self) -> Option<u32> {
        self.parts.get(2).copied()
    }

    /// Number of dotted parts the user wrote (`2.9` → 2).
    pub fn precision(&self) -> usize {
        self.parts.len()
    }

    /// `major.minor`, the key of compatibility rows.
    pub fn major_minor(&self) -> (u32, u32) {
        (self.major(), self.minor().unwrap_or(0))
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let length = self.parts.len().max(other.parts.len());
        for index in 0..length {
            let left = self.parts.get(index).copied().unwrap_or(0);
            let right = other.parts.get(index).copied().unwrap_or(0);
            match left.cmp(&right) {
                Ordering::Equal => continue,
                unequal => return unequal,
            }
        }
        Ordering::Equal
    }
}
