//! The list-price table `reel stats` estimates cost with, shipped as data
//! (`data/prices.json`, compiled in) so that updating a price is a data change.
//!
//! Pricing fails closed: a model is priced only by an entry whose `match` equals it or
//! is followed by `-` and a date (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`).
//! mcp-tape accepts any `<entry>-` suffix; reel narrows that to dates because a family
//! name is often a prefix of a *different* model with another price (`gpt-4o` of
//! `gpt-4o-mini` and `gpt-4o-realtime-preview`, `o3` of `o3-mini`), and an unknown
//! model is unpriced, never guessed.

use std::sync::OnceLock;

use serde::Deserialize;

/// The bundled table's text.
const BUNDLED: &str = include_str!("../../data/prices.json");

/// Per-million-token list prices of one model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Price {
    /// Canonical id.
    pub id: String,
    /// The model id this entry prices (and its dated variants).
    #[serde(rename = "match")]
    pub match_id: String,
    /// Human name.
    #[serde(default)]
    pub display: Option<String>,
    /// Provider.
    #[serde(default)]
    pub provider: Option<String>,
    /// USD per million input tokens (cache reads and writes excluded).
    pub in_per_mtok: f64,
    /// USD per million output tokens.
    pub out_per_mtok: f64,
    /// USD per million cache-read tokens.
    pub cache_read_per_mtok: f64,
    /// USD per million cache-write (cache-creation) tokens.
    pub cache_write_per_mtok: f64,
    /// When this entry was last checked.
    pub as_of: String,
    /// A caveat, if any.
    #[serde(default)]
    pub note: Option<String>,
}

impl Price {
    /// The estimated cost of these token counts, in USD.
    pub fn cost(&self, input: f64, output: f64, cache_read: f64, cache_write: f64) -> f64 {
        (input * self.in_per_mtok
            + output * self.out_per_mtok
            + cache_read * self.cache_read_per_mtok
            + cache_write * self.cache_write_per_mtok)
            / 1e6
    }
}

/// A price table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PriceTable {
    /// The newest date any entry was checked.
    pub as_of: String,
    /// Where the prices come from.
    pub source: String,
    /// The entries.
    pub models: Vec<Price>,
}

impl PriceTable {
    /// The table shipped with reel.
    pub fn bundled() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            serde_json::from_str(BUNDLED)
                .expect("data/prices.json is valid (checked by a unit test of this module)")
        })
    }

    /// Parses a table in the bundled file's shape.
    pub fn from_json(text: &str) -> Result<PriceTable, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The entry that prices `model`, if any (exact match first, then a dated variant).
    pub fn lookup(&self, model: &str) -> Option<&Price> {
        self.models
            .iter()
            .find(|p| p.match_id == model)
            .or_else(|| {
                self.models
                    .iter()
                    .find(|p| is_dated_variant(model, &p.match_id))
            })
    }
}

/// True when `model` is `<base>-<date>` with a date `YYYYMMDD` or `YYYY-MM-DD`.
fn is_dated_variant(model: &str, base: &str) -> bool {
    let Some(rest) = model.strip_prefix(base).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let b = rest.as_bytes();
    let digits = |r: &[u8]| r.iter().all(u8::is_ascii_digit);
    match b.len() {
        8 => digits(b),
        10 => {
            digits(&b[0..4]) && b[4] == b'-' && digits(&b[5..7]) && b[7] == b'-' && digits(&b[8..])
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_table_parses_and_its_as_of_is_the_newest_entry() {
        let t = PriceTable::bundled();
        assert!(!t.as_of.is_empty() && !t.source.is_empty());
        assert!(t.lookup("claude-opus-4-7").is_some());
        let newest = t.models.iter().map(|p| p.as_of.as_str()).max().unwrap();
        assert_eq!(t.as_of, newest);
    }

    /// mcp-tape's own price table in `../shared/fixtures` (run by `cargo xtask test`
    /// when that directory exists).
    mod shared_fixtures {
        use super::*;

        #[test]
        #[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
        fn the_bundled_table_covers_mcp_tapes_reference_models() {
            let t = PriceTable::bundled();
            let path = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/fixtures/mcp-tape/foil/prices-anthropic.json"
            );
            let reference = std::fs::read_to_string(path).unwrap();
            let reference: Vec<Price> = serde_json::from_str(&reference).unwrap();
            for r in &reference {
                let ours = t
                    .lookup(&r.match_id)
                    .unwrap_or_else(|| panic!("{} missing", r.id));
                assert_eq!(
                    (
                        ours.in_per_mtok,
                        ours.out_per_mtok,
                        ours.cache_read_per_mtok,
                        ours.cache_write_per_mtok
                    ),
                    (
                        r.in_per_mtok,
                        r.out_per_mtok,
                        r.cache_read_per_mtok,
                        r.cache_write_per_mtok
                    ),
                    "{}",
                    r.id
                );
            }
        }
    }

    #[test]
    fn dated_variants_match_and_other_suffixes_do_not() {
        let t = PriceTable::bundled();
        assert_eq!(
            t.lookup("claude-sonnet-4-5-20250929").unwrap().id,
            "claude-sonnet-4-5"
        );
        assert_eq!(t.lookup("gpt-4.1-2025-04-14").unwrap().id, "gpt-4.1");
        assert_eq!(t.lookup("gpt-4o-mini").unwrap().id, "gpt-4o-mini");
        assert_eq!(
            t.lookup("gpt-4o-2024-05-13").unwrap().id,
            "gpt-4o-2024-05-13"
        );
        assert_eq!(t.lookup("gpt-4o-2024-08-06").unwrap().id, "gpt-4o");
        assert!(t.lookup("gpt-4o-realtime-preview").is_none());
        assert!(t.lookup("claude-sonnet-4-5-latest").is_none());
        assert!(t.lookup("claude-sonnet-4").is_none());
        assert!(t.lookup("(no model)").is_none());
    }

    #[test]
    fn cost_per_million() {
        let t = PriceTable::bundled();
        let p = t.lookup("claude-opus-4-7").unwrap();
        // 1M in at 5, 2M out at 25, 10M cache read at 0.5, 4M cache write at 6.25.
        assert_eq!(p.cost(1e6, 2e6, 10e6, 4e6), 5.0 + 50.0 + 5.0 + 25.0);
    }
}
