//! A bench's result: the [`Figure`]s it measured, each with the issue's [`Target`] where
//! it sets one, and how a value is written in the table.

use serde::Serialize;
use serde_json::json;

/// One measured figure.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// What was measured, e.g. `reel stats --json`.
    pub name: String,
    /// The value; `None` when it could not be measured (the note says why).
    pub value: Option<f64>,
    /// Unit of `value`, e.g. `MB/s` (10^6 bytes per second) or `MiB`.
    pub unit: String,
    /// The target for this figure, if it sets one.
    pub target: Option<Target>,
    /// How it was measured, or why it is missing.
    pub note: String,
}

/// A target: the value must be at least / at most this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// `value >= .0`.
    AtLeast(f64),
    /// `value <= .0`.
    AtMost(f64),
}

impl Target {
    /// True when `value` meets the target.
    pub fn met(self, value: f64) -> bool {
        match self {
            Target::AtLeast(t) => value >= t,
            Target::AtMost(t) => value <= t,
        }
    }

    pub(super) fn text(self) -> String {
        match self {
            Target::AtLeast(t) => format!(">= {}", fmt_value(t)),
            Target::AtMost(t) => format!("<= {}", fmt_value(t)),
        }
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (op, v) = match *self {
            Target::AtLeast(v) => (">=", v),
            Target::AtMost(v) => ("<=", v),
        };
        json!({ "op": op, "value": v }).serialize(s)
    }
}

impl Figure {
    /// A measured figure. A value that is not finite (a division by a zero time) is
    /// recorded as not measured.
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        let finite = value.is_finite();
        Figure {
            name: name.into(),
            value: finite.then_some(value),
            unit: unit.into(),
            target: None,
            note: if finite {
                String::new()
            } else {
                "not finite (nothing measured?)".into()
            },
        }
    }

    /// A figure that could not be measured, and why.
    pub fn missing(
        name: impl Into<String>,
        unit: impl Into<String>,
        why: impl Into<String>,
    ) -> Self {
        Figure {
            name: name.into(),
            value: None,
            unit: unit.into(),
            target: None,
            note: why.into(),
        }
    }

    /// Sets the target.
    pub fn target(mut self, t: Target) -> Self {
        self.target = Some(t);
        self
    }

    /// Appends to the note.
    pub fn note(mut self, note: impl AsRef<str>) -> Self {
        if !self.note.is_empty() {
            self.note.push_str("; ");
        }
        self.note.push_str(note.as_ref());
        self
    }

    /// Whether the target is met; `None` without a target or a value.
    pub fn met(&self) -> Option<bool> {
        Some(self.target?.met(self.value?))
    }
}

/// A short, readable number: 612, 48.3, 0.83.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || (a >= 100.0 && v.fract() == 0.0) {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_missing_values() {
        let f = Figure::new("x", 450.0, "MB/s").target(Target::AtLeast(400.0));
        assert_eq!(f.met(), Some(true));
        let f = Figure::new("x", 70.0, "MiB").target(Target::AtMost(64.0));
        assert_eq!(f.met(), Some(false));
        let f = Figure::new("x", f64::INFINITY, "MB/s").target(Target::AtLeast(1.0));
        assert_eq!(f.value, None);
        assert_eq!(f.met(), None);
        assert_eq!(
            serde_json::to_value(Target::AtMost(2.5)).unwrap(),
            json!({"op": "<=", "value": 2.5})
        );
    }
}
