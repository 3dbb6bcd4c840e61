//! `reel` as a user runs it: the built binary, one test binary with a module per area
//! and one harness (`harness`). Peers come from `$REEL_PEERS`, else `<workspace>/.peers`
//! (`cargo xtask peers`); when they are missing the tests fail and say so.

mod harness;

mod check;
mod conformance;
mod contract;
mod demo;
mod diff;
mod diff_peers;
mod foreign;
mod hostile_yaml;
mod import;
mod install;
mod limits;
mod llm;
mod long_lines;
mod ls;
mod otlp;
mod play;
mod play_http;
mod play_http_peers;
mod play_peers;
mod rec;
mod rec_http;
mod redact;
mod seal;
mod secrets;
mod shared_fixtures;
mod stats;
mod trycmd;
mod verify;
mod verify_http;
mod view;
mod workflow;
