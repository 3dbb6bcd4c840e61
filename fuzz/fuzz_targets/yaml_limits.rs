#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    assert!(reel_fuzz::run("yaml_limits", data));
});
