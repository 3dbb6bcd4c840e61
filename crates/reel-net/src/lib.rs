//! The networking runtime every side of reel shares, with no MCP in it: line framing of
//! a byte stream, child processes and their stdio, HTTP (URLs, the loopback guard,
//! hop-by-hop headers), server-sent events, and with features the one accept loop of
//! reel's HTTP listeners (`serve`: [`serve`], [`reply`]) and connections to an upstream
//! over TCP or TLS (`client`: [`upstream`]). The recording proxies, the tape server,
//! the LLM proxy, the OTLP sender and the viewer all go through these; what MCP means is
//! `reel-mcp`.

#![deny(missing_docs)]

pub mod framing;
pub mod http;
#[cfg(unix)]
pub mod process;
#[cfg(feature = "serve")]
pub mod reply;
#[cfg(feature = "serve")]
pub mod serve;
pub mod sse;
#[cfg(feature = "client")]
pub mod upstream;
