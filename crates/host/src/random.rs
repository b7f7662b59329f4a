//! Random names and secrets, from the kernel's CSPRNG: below the machine and the confined
//! folders, which both name temporary files with them.

/// `bytes` random bytes as lowercase hex, from the kernel's CSPRNG.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buffer)?;
    Ok(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}
