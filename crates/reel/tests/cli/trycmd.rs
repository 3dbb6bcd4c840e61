//! The CLI's contract as transcripts (`tests/cli/cmd/*.toml`): usage errors and their
//! exit codes, error texts for inputs that cannot be read, and what `--help` promises.
//! Each case runs the built `reel`; `TRYCMD=overwrite cargo test -p reel --test cli
//! trycmd` rewrites the expected output after a deliberate change.

#[test]
fn transcripts() {
    trycmd::TestCases::new()
        .register_bin(
            "reel",
            trycmd::schema::Bin::Path(env!("CARGO_BIN_EXE_reel").into()),
        )
        .case("tests/cli/cmd/*.toml");
}
