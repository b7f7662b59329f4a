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

# Benchmarks against the docker CLI (none yet: see issue on benchmarks).
bench:
    @echo "no benchmarks yet"

# The main job: list, show and render the built-in images.
demo:
    scripts/demo
