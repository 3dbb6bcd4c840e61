#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    assert!(reel_fuzz::run("llm_seams", data));
});
