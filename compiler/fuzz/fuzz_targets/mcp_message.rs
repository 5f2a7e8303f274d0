#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice::fuzz::mcp_message(data));
