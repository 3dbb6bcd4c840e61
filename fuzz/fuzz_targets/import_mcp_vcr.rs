#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    assert!(reel_fuzz::run("import_mcp_vcr", data));
});
