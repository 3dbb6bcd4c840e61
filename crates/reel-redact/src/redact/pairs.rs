//! `reel/3` key rules for secrets whose name is a *value*, not a member name: what
//! environment lists, header lists and SQL results look like.
//!
//! - `{"name": "ACME_API_KEY", "value": "…"}` (Kubernetes `env`, MCP config `env`
//!   lists, header lists): a `value` member after a `name`/`key` member that names a
//!   secret is judged as if it were a member of that name.
//! - `[["ACME_API_KEY", "…"], …]`: in a pair that sits in a list (or whose name is an
//!   `UPPER_SNAKE` variable), the elements after a secret name.
//! - `{"columns": ["id", "password"], "rows": [[1, "…"]]}`: a table's cells under a
//!   column named as a secret (`columns`/`fields`/`headers` before `rows`/`data`/
//!   `values`/`records`).
//! - `["eyJhbGciOi…", "eyJzdWIiOi…", "<signature>"]`: a JWT whose parts are separate
//!   elements; the lone `eyJ…` part and the two elements after it.
//!
//! Why a module beside the walker: these rules look at siblings, so they keep a little
//! state per open container ([`Pairs`]); the walker asks it what a value's mode is and
//! tells it each string it reads. The walk stays one pass: a name must come before its
//! value (a `value` before its `name` is not seen, a limit the README names).

use std::rc::Rc;

use super::builtin::Revision;
use super::names::{self, Strength};

/// Where a value sits in its container, as far as these rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A member that may name its sibling's secret (`name`, `key`).
    Name,
    /// A member that holds a named secret (`value`, `val`).
    Value,
    /// A table's column names (`columns`, `fields`, `headers`, `column_names`).
    Columns,
    /// A table's rows (`rows`, `data`, `values`, `records`).
    Rows,
    /// Any other member.
    Member,
    /// An array element.
    Index(usize),
}

impl Slot {
    pub(crate) fn of_key(key: &str) -> Slot {
        match key.to_ascii_lowercase().as_str() {
            "name" | "key" | "variable" | "var" | "env" | "header" => Slot::Name,
            "value" | "val" => Slot::Value,
            "columns" | "fields" | "headers" | "column_names" | "columnnames" | "cols" => {
                Slot::Columns
            }
            "rows" | "data" | "values" | "records" => Slot::Rows,
            _ => Slot::Member,
        }
    }
}

/// The per-container state.
#[derive(Debug, Default, Clone)]
pub(crate) struct Pairs {
    /// A sibling named the secret this container's `value` (or later elements) holds.
    named: Option<Strength>,
    /// JWT parts still to come as the next elements.
    jwt_left: u8,
    /// This object's table columns, by index (from its `columns` member).
    columns: Option<Rc<Vec<Option<Strength>>>>,
    /// What this container is within a table.
    table: Table,
    /// This array is a pair list's element (its parent is an array).
    in_array: bool,
}

#[derive(Debug, Default, Clone)]
enum Table {
    #[default]
    None,
    /// The `columns` array: its strings name the parent's columns.
    Columns,
    /// The `rows` array: each element is a row.
    Rows(Rc<Vec<Option<Strength>>>),
    /// One row: element `i` is a cell of column `i`.
    Row(Rc<Vec<Option<Strength>>>),
}

/// The strength a value at `slot` of a container with state `pairs` gets from its
/// siblings, if any.
pub(crate) fn strength(pairs: &Pairs, slot: Slot) -> Option<Strength> {
    match slot {
        Slot::Value => pairs.named,
        Slot::Index(i) => {
            if pairs.jwt_left > 0 {
                return Some(Strength::Strong);
            }
            if let Table::Row(cols) = &pairs.table {
                return cols.get(i).copied().flatten();
            }
            (i >= 1).then_some(pairs.named).flatten()
        }
        _ => None,
    }
}

/// The state of a container opened at `slot` of a container with state `parent`.
pub(crate) fn open(parent: Option<&Pairs>, slot: Slot, array: bool) -> Pairs {
    let mut pairs = Pairs {
        in_array: parent.is_some() && matches!(slot, Slot::Index(_)),
        ..Pairs::default()
    };
    let Some(parent) = parent else {
        return pairs;
    };
    pairs.table = match (&parent.table, slot, array) {
        (_, Slot::Columns, true) => Table::Columns,
        (_, Slot::Rows, true) => match &parent.columns {
            Some(cols) => Table::Rows(cols.clone()),
            None => Table::None,
        },
        (Table::Rows(cols), Slot::Index(_), true) => Table::Row(cols.clone()),
        _ => Table::None,
    };
    pairs
}

/// A string was read at `slot` of the container with state `pairs` (`parent`: the
/// state of that container's own container, for a `columns` array). Returns whether
/// the string itself is a secret (a JWT part standing alone).
pub(crate) fn saw_string(
    pairs: &mut Pairs,
    parent: Option<&mut Pairs>,
    slot: Slot,
    text: &str,
) -> bool {
    match slot {
        Slot::Name => {
            pairs.named = names::member(text, Revision::Reel3).filter(|_| is_identifier(text));
            false
        }
        Slot::Index(i) => {
            if pairs.jwt_left > 0 {
                pairs.jwt_left -= 1;
                return true;
            }
            if let (Table::Columns, Some(parent)) = (&pairs.table, parent) {
                let cols = Rc::make_mut(parent.columns.get_or_insert_with(Default::default));
                cols.resize(i, None);
                cols.push(names::member(text, Revision::Reel3));
                return false;
            }
            if i == 0 && is_identifier(text) && (pairs.in_array || is_upper_snake(text)) {
                pairs.named = names::member(text, Revision::Reel3);
            }
            if is_jwt_part(text) {
                pairs.jwt_left = 2;
                return true;
            }
            false
        }
        _ => false,
    }
}

/// A name that can label a secret: a short run of `[A-Za-z0-9_.-]`.
fn is_identifier(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn is_upper_snake(s: &str) -> bool {
    s.bytes().any(|b| b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A JWT header or payload alone: `eyJ` + base64url, no dots.
fn is_jwt_part(s: &str) -> bool {
    s.len() >= 16
        && s.starts_with("eyJ")
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'='))
}
