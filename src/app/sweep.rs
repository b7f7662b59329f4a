//! `tfimg sweep`: many trials of one command, queued onto the GPU slots (or CPU slots) of
//! this host through THE launcher, journaled so a sweep survives anything, and read back
//! for its status, results and report (`folder`).

pub mod folder;
