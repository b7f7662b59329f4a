# Developer tasks. The scripts they call work without `just` too (see README).

# Build the release binary.
build:
    cargo build --release --locked

# Every test (prepares Docker and debootstrap first).
test *ARGS:
    scripts/test {{ARGS}}

# Formatting and lints, as CI checks them.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --locked --all-targets -- -D warnings

# Benchmarks against the docker CLI, alternating runs; writes bench/results.md.
bench *ARGS:
    scripts/setup-machine
    cargo build --release --locked --bins --benches
    bench/bench.py {{ARGS}}

# The bench rows of an earlier commit against the working tree, alternating; writes bench/commits.md.
bench-commits BASE *ARGS:
    scripts/setup-machine
    cargo build --release --locked --bins --benches
    bench/commits.py {{BASE}} {{ARGS}}

# The main job: bootstrap the base, build and verify the Jupyter images, run one and check its token.
demo:
    scripts/demo

# Fuzz each input parser for SECONDS (nightly + cargo-fuzz), then minimize the corpora.
fuzz SECONDS="150":
    #!/usr/bin/env bash
    set -euo pipefail
    # A crash stops here with its input in fuzz/artifacts/<target>/: keep a minimized
    # copy in fuzz/regressions/<target>/, which `cargo test --test fuzz_inputs` replays.
    for target in spec team sweep gpus mounts ports; do
        dict=()
        if [ "$target" = spec ] || [ "$target" = team ] || [ "$target" = sweep ]; then dict=(-dict={{justfile_directory()}}/fuzz/yaml.dict); fi
        cargo +nightly fuzz run "$target" -- -max_total_time={{SECONDS}} \
            -rss_limit_mb=2048 -timeout=10 "${dict[@]}"
        cargo +nightly fuzz cmin "$target"
    done
