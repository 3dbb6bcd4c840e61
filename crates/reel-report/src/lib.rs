//! What reel prints, for people and for CI systems: trace content made safe for a
//! terminal and for markup ([`display`]: escaping, tones, tables' cells), JUnit XML
//! ([`junit`]) and GitHub Actions annotations ([`github`]). The reports themselves (a
//! diff, a check, a verify run, stats) are built by the crates that know their content;
//! they write through these. No trace format and no MCP here: a leaf every crate may
//! use.

pub mod display;
pub mod github;
pub mod junit;
