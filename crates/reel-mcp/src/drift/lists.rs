//! List answers (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) shown as a changelog: items added, removed and changed,
//! by name, with the JSON pointers that changed inside each.
//!
//! Which changes are structural is decided here and only here: a tool or prompt added
//! or removed, a tool's `inputSchema`/`outputSchema`, a prompt's `arguments`. Resources
//! and templates are data a server may list differently on every run, so their changes
//! (and a tool's description or title) are output drift.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::normalize::diff;

/// A list (`tools/list`, …) shown as a changelog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Changelog {
    /// The list member: `tools`, `prompts`, `resources`, `resourceTemplates`.
    pub list: String,
    /// One entry per item added, removed or changed, by name.
    pub entries: Vec<ChangeEntry>,
    /// Differences outside the items (e.g. `/result/nextCursor`).
    pub other_pointers: Vec<String>,
}

/// What happened to one item of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// In both, different.
    Changed,
}

/// One item of a changelog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChangeEntry {
    /// What happened.
    pub change: Change,
    /// The item's name (or URI).
    pub name: String,
    /// For `changed`: JSON pointers into the item that differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pointers: Vec<String>,
    /// True when this entry alone makes the drift structural.
    pub structural: bool,
}

/// How one list method is read.
struct ListSpec {
    /// The member of `result` holding the items.
    member: &'static str,
    /// The member naming an item.
    key: &'static str,
    /// Pointer prefixes inside an item whose change is structural.
    structural: &'static [&'static str],
    /// True when an item added or removed is structural.
    membership_structural: bool,
}

fn spec(method: &str) -> Option<ListSpec> {
    Some(match method {
        "tools/list" => ListSpec {
            member: "tools",
            key: "name",
            structural: &["/inputSchema", "/outputSchema"],
            membership_structural: true,
        },
        "prompts/list" => ListSpec {
            member: "prompts",
            key: "name",
            structural: &["/arguments"],
            membership_structural: true,
        },
        "resources/list" => ListSpec {
            member: "resources",
            key: "uri",
            structural: &[],
            membership_structural: false,
        },
        "resources/templates/list" => ListSpec {
            member: "resourceTemplates",
            key: "uriTemplate",
            structural: &[],
            membership_structural: false,
        },
        _ => return None,
    })
}

/// The changelog of two normalised answers to a list method, and whether it is
/// structural; `None` when the method is not a list method or an answer holds no list.
pub fn changelog(method: &str, a: &Value, b: &Value) -> Option<(Changelog, bool)> {
    let spec = spec(method)?;
    let at = format!("/result/{}", spec.member);
    let items_a = a.pointer(&at)?.as_array()?;
    let items_b = b.pointer(&at)?.as_array()?;
    let name = |item: &Value, i: usize| {
        item.get(spec.key)
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{i}"), str::to_owned)
    };
    let index_b: HashMap<String, &Value> = items_b
        .iter()
        .enumerate()
        .map(|(i, v)| (name(v, i), v))
        .collect();
    let names_a: std::collections::HashSet<String> = items_a
        .iter()
        .enumerate()
        .map(|(i, v)| name(v, i))
        .collect();
    let mut entries = Vec::new();
    for (i, item) in items_a.iter().enumerate() {
        let n = name(item, i);
        match index_b.get(&n) {
            None => entries.push(ChangeEntry {
                change: Change::Removed,
                name: n,
                pointers: Vec::new(),
                structural: spec.membership_structural,
            }),
            Some(other) => {
                let pointers: Vec<String> =
                    diff(item, other).into_iter().map(|d| d.pointer).collect();
                if !pointers.is_empty() {
                    let structural = pointers.iter().any(|p| {
                        spec.structural
                            .iter()
                            .any(|s| p == s || p.starts_with(&format!("{s}/")))
                    });
                    entries.push(ChangeEntry {
                        change: Change::Changed,
                        name: n,
                        pointers,
                        structural,
                    });
                }
            }
        }
    }
    for (i, item) in items_b.iter().enumerate() {
        let n = name(item, i);
        if !names_a.contains(&n) {
            entries.push(ChangeEntry {
                change: Change::Added,
                name: n,
                pointers: Vec::new(),
                structural: spec.membership_structural,
            });
        }
    }
    let other_pointers = diff(a, b)
        .into_iter()
        .map(|d| d.pointer)
        .filter(|p| p != &at && !p.starts_with(&format!("{at}/")))
        .collect();
    let structural = entries.iter().any(|e| e.structural);
    Some((
        Changelog {
            list: spec.member.to_owned(),
            entries,
            other_pointers,
        },
        structural,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_added_removed_and_schema_changes_are_structural() {
        let a = json!({"result":{"tools":[
            {"name":"add","description":"adds","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}},
            {"name":"gone","inputSchema":{}}]}});
        let b = json!({"result":{"tools":[
            {"name":"add","description":"adds","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}},
            {"name":"new","inputSchema":{}}],"nextCursor":"2"}});
        let (log, structural) = changelog("tools/list", &a, &b).unwrap();
        assert!(structural);
        let got: Vec<_> = log
            .entries
            .iter()
            .map(|e| (e.change, e.name.as_str(), e.structural))
            .collect();
        assert_eq!(
            got,
            [
                (Change::Changed, "add", true),
                (Change::Removed, "gone", true),
                (Change::Added, "new", true)
            ]
        );
        assert_eq!(log.entries[0].pointers, ["/inputSchema/properties/a/type"]);
        assert_eq!(log.other_pointers, ["/result/nextCursor"]);
    }

    #[test]
    fn descriptions_and_resources_are_output_drift() {
        let a = json!({"result":{"tools":[{"name":"add","description":"adds"}]}});
        let b = json!({"result":{"tools":[{"name":"add","description":"sums"}]}});
        let (log, structural) = changelog("tools/list", &a, &b).unwrap();
        assert!(!structural);
        assert_eq!(log.entries[0].pointers, ["/description"]);
        let a = json!({"result":{"resources":[{"uri":"x://1"}]}});
        let b = json!({"result":{"resources":[{"uri":"x://2"}]}});
        let (log, structural) = changelog("resources/list", &a, &b).unwrap();
        assert!(!structural);
        assert_eq!(log.entries.len(), 2);
        assert!(changelog("tools/call", &a, &b).is_none());
    }
}
