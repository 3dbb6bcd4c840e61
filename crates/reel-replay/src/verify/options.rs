//! What to verify: the recording, the live server and how patient to be with it.

use std::path::PathBuf;
use std::time::Duration;

use reel_mcp::normalize::Pointer;
use reel_mcp::notifications::NotificationCheck;

/// The default answer timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a server has to start and answer its first request (`npx` may
/// download the server first).
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// What to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// The recording.
    pub trace: PathBuf,
    /// The session to play (1-based).
    pub session: usize,
    /// The live server's command and arguments.
    pub command: Vec<String>,
    /// The live server's URL (`--url`, Streamable HTTP or legacy HTTP+SSE); when set,
    /// `command` is not used.
    pub url: Option<String>,
    /// `--header NAME=VALUE`: sent with every HTTP request to the live server (values
    /// already expanded from the environment); never written to the live run's trace.
    pub headers: Vec<(String, String)>,
    /// `--upstream-ca`: extra certificate authorities for an `https://` URL.
    pub ca: Vec<PathBuf>,
    /// How long to wait for each answer (and for each server request the recording
    /// saw before the next client message).
    pub timeout: Duration,
    /// How long the server has to start and answer the first request (the handshake);
    /// the longer of this and `timeout` applies to it.
    pub start_timeout: Duration,
    /// The user's volatile fields (JSON pointers into the JSON-RPC message).
    pub ignore: Vec<Pointer>,
    /// How notifications are compared.
    pub notifications: NotificationCheck,
    /// Write the live run as a trace into this directory; `None`: do not record it.
    pub record_dir: Option<PathBuf>,
    /// The live run's label (default: the recording's label, or its file stem, plus
    /// `-verify`).
    pub label: Option<String>,
}

impl VerifyOptions {
    /// Defaults: session 1, [`DEFAULT_TIMEOUT`], [`DEFAULT_START_TIMEOUT`], counts of notifications, no record.
    pub fn new(trace: impl Into<PathBuf>, command: Vec<String>) -> VerifyOptions {
        VerifyOptions {
            trace: trace.into(),
            session: 1,
            command,
            url: None,
            headers: Vec::new(),
            ca: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            start_timeout: DEFAULT_START_TIMEOUT,
            ignore: Vec::new(),
            notifications: NotificationCheck::Count,
            record_dir: None,
            label: None,
        }
    }
}
