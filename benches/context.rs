//! Build-context packing throughput: tfimg's deterministic tar stream of a folder, read to
//! the end as the daemon would, in MB/s. Run by bench/bench.py (row 6):
//! `cargo bench --bench context -- DIR` prints one JSON line.

use std::time::Instant;

use futures_util::StreamExt;
use tfimg_testing::host::archive::BuildContext;
use tfimg_testing::spec::resolved::CopiedFiles;

fn main() {
    // `cargo test --all-targets` runs benches without arguments: nothing to measure then.
    let Some(folder) = std::env::args().skip(1).find(|arg| !arg.starts_with("--")) else {
        eprintln!(
            "usage: cargo bench --bench context -- DIR (bench/bench.py passes its 1 GiB folder)"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let copied = CopiedFiles {
        source: std::path::PathBuf::from(&folder),
        context_path: "files/0".to_string(),
        destination: "/data".to_string(),
        ignore: Vec::new(),
        location: None,
        roots: vec![std::path::PathBuf::from(&folder)],
    };
    let start = Instant::now();
    let mut context = BuildContext::default();
    context.add_bytes("Dockerfile", 0o644, b"FROM scratch\n".to_vec());
    context.add_copied(&copied).expect("the folder is readable");
    let bytes = runtime.block_on(async move {
        let mut stream = Box::pin(context.into_stream());
        let mut total = 0u64;
        while let Some(chunk) = stream.next().await {
            total += chunk.expect("the stream reads").len() as u64;
        }
        total
    });
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{{\"bytes\": {bytes}, \"seconds\": {seconds:.4}, \"mb_per_s\": {:.1}}}",
        bytes as f64 / 1e6 / seconds
    );
}
