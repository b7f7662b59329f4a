# Developer tasks. The scripts they call work without `just` too (see README).

# Build the release binary.
build:
    cargo build --release --locked

# Every test (prepares Docker and debootstrap first).
test *ARGS:
    scripts/test {{ARGS}}

# Formatting and lints, as CI checks them.
lint:
    cargo fmt --check
    cargo clippy --locked --all-targets -- -D warnings

# Benchmarks against the docker CLI, alternating runs; writes bench/results.md.
bench *ARGS:
    scripts/setup-machine
    cargo build --release --locked --bins --benches
    bench/bench.py {{ARGS}}

# The main job: bootstrap the base, build and verify the Jupyter images, run one and check its token.
demo:
    scripts/demo
