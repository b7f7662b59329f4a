//! What tfimg's integration tests (`tests/`) and benches (`benches/`) may use of its
//! crates, besides running the `tfimg` binary: the engine to set up and inspect what a
//! test made, the host's ids and data folder, the lock and sweep formats a test reads
//! back, and the fuzzing properties (which `fuzz/` takes from the core itself). A dev-dependency, never part of
//! tfimg; the binary itself exports nothing but its entry point. Grow it by what a test
//! needs, one name at a time (tests/README.md).

/// What every tfimg error carries: its exit code and its hint.
pub use tfimg_core::input::{Exit, Failure};

/// The Docker Engine, as tfimg reaches it: connect, then the role traits' calls.
pub mod engine {
    pub use tfimg_engine::prelude;
    pub use tfimg_engine::{ContainerIo, Containers, Docker, EngineError, Finished, OneOff};
}

/// This machine: who runs the tests, where tfimg keeps its data, HTTP probes.
pub mod host {
    pub use tfimg_host::{current_ids, Machine, Probes};

    pub mod machine {
        pub use tfimg_host::machine::data_dir;
    }

    /// The build context tfimg sends the engine (the benches time it).
    pub mod archive {
        pub use tfimg_host::archive::BuildContext;
    }
}

/// Lock files, read back as tfimg reads them.
pub mod lock {
    pub use tfimg_core::lock::{expected, expected_below_packages, hex_digest, read};
}

/// A resolved spec's copied files (the benches' build contexts).
pub mod spec {
    pub mod resolved {
        pub use tfimg_core::spec::resolved::CopiedFiles;
    }
}

/// A sweep's journal, results and report, read back as tfimg reads them.
pub mod sweep {
    pub use tfimg_core::sweep::{journal, report, results};
}

/// The properties every input parser is held to (`tests/fuzz_inputs.rs`; `fuzz/` too).
pub use tfimg_core::fuzzing;
