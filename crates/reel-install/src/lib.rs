//! # reel-install
//!
//! `reel install` and `reel uninstall`: the MCP servers a client already runs, recorded
//! without changing how the client is used. Each stdio server entry of the client's
//! configuration becomes `reel rec --dir DIR --name NAME -- <command…>` with absolute
//! paths (clients start servers from any directory with a reduced PATH), its other keys
//! and its `env` kept; `reel uninstall` puts back the exact original.
//!
//! - [`targets`]: the clients (Claude Code, Claude Desktop, Cursor, VS Code, Windsurf,
//!   Gemini CLI), their files and where the servers are in them;
//! - [`edit`]: one file's text, wrapped or put back, every byte outside the wrapped
//!   entries untouched (module doc: the invariants, and why remote entries are left
//!   alone);
//! - [`files`]: reading, the dry run's diff, the backup and the atomic write;
//! - [`jsonc`]: spans of JSON-with-comments values, the ground of every edit.
//!
//! POSIX only (paths, executables, PATH).

#![deny(missing_docs)]

pub mod edit;
pub mod files;
pub mod jsonc;
pub mod targets;

pub use edit::{Counts, Edited, MARKER, Skipped, Wrapper};
pub use files::{Backup, Change, FileError};
pub use targets::{ConfigFile, Scope, Target};
