#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tfimg::fuzzing::model_config(data));
