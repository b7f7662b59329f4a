#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tfimg_core::fuzzing::team(data));
