//! What kind of line a record is: its `dir` and its class, decided from `type` and `dir`
//! alone, before (or without) building the line.

use serde::{Deserialize, Serialize};

/// `dir` of a line: tape direction, not transport direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Client to server.
    In,
    /// Server to client.
    Out,
    /// A one-way producer event (format-extensions §2).
    Event,
    /// A command issued at this layer (format-extensions §2).
    Command,
    /// A passive telemetry sample (format-extensions §2).
    Telemetry,
}

impl Dir {
    /// Parses a `dir` value; `None` for values the format does not define.
    pub fn parse(s: &str) -> Option<Dir> {
        Some(match s {
            "in" => Dir::In,
            "out" => Dir::Out,
            "event" => Dir::Event,
            "command" => Dir::Command,
            "telemetry" => Dir::Telemetry,
            _ => return None,
        })
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::In => "in",
            Dir::Out => "out",
            Dir::Event => "event",
            Dir::Command => "command",
            Dir::Telemetry => "telemetry",
        }
    }

    /// True for the two JSON-RPC directions.
    pub fn is_message(self) -> bool {
        matches!(self, Dir::In | Dir::Out)
    }
}

/// What kind of line a record is, decided from `type` and `dir` alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineClass {
    /// `type: "meta"`.
    Meta,
    /// `dir: "in" | "out"`.
    Message,
    /// `dir: "event" | "command" | "telemetry"`.
    Event,
    /// `type: "turn"`.
    Turn,
    /// `type: "end"`.
    End,
    /// Anything else: an unknown `type` or `dir`, or neither.
    Other,
}

impl LineClass {
    /// Every class, in the order above.
    pub const ALL: [LineClass; 6] = [
        LineClass::Meta,
        LineClass::Message,
        LineClass::Event,
        LineClass::Turn,
        LineClass::End,
        LineClass::Other,
    ];

    /// Its name, as it serialises.
    pub fn name(self) -> &'static str {
        match self {
            LineClass::Meta => "meta",
            LineClass::Message => "message",
            LineClass::Event => "event",
            LineClass::Turn => "turn",
            LineClass::End => "end",
            LineClass::Other => "other",
        }
    }
}

/// Decides the class of a line from its `type` and `dir` without building it.
pub fn classify(ty: Option<&str>, dir: Option<&str>) -> LineClass {
    match ty {
        Some("meta") => LineClass::Meta,
        Some("turn") => LineClass::Turn,
        Some("end") => LineClass::End,
        Some(_) => LineClass::Other,
        None => match dir.and_then(Dir::parse) {
            Some(d) if d.is_message() => LineClass::Message,
            Some(_) => LineClass::Event,
            None => LineClass::Other,
        },
    }
}
